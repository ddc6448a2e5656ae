import type { Logger } from '../core/ports.js';
import {
  createBearerAuth,
  createJwtAuth,
  firstOf,
  readJwks,
  readTokensFile,
  type Authenticate,
} from '../server/auth/index.js';

/** `terminus serve --auth-*` flags (issue 12 item 2). */
export interface AuthFlags {
  readonly authTokens?: string;
  readonly authJwks?: string;
  readonly authIssuer?: string;
  readonly authAudience?: string;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The `authenticate` hook the flags ask for, or undefined (anonymous callers). A bad file or a
 * missing companion flag is one line on stderr and exit 2. Binding a non-loopback host without
 * authentication warns, naming what anyone who can reach the port can then do.
 */
export async function serveAuth(
  flags: AuthFlags,
  context: { readonly host: string; readonly stdio: boolean; readonly logger: Logger },
): Promise<Authenticate | undefined> {
  const hooks: Authenticate[] = [];
  try {
    if (flags.authTokens !== undefined)
      hooks.push(createBearerAuth({ tokens: await readTokensFile(flags.authTokens) }));
    if (flags.authJwks !== undefined) {
      if (flags.authIssuer === undefined || flags.authAudience === undefined) {
        throw new Error('--auth-jwks needs --auth-issuer and --auth-audience');
      }
      hooks.push(
        createJwtAuth({ jwks: await readJwks(flags.authJwks), issuer: flags.authIssuer, audience: flags.authAudience }),
      );
    } else if (flags.authIssuer !== undefined || flags.authAudience !== undefined) {
      throw new Error('--auth-issuer and --auth-audience need --auth-jwks');
    }
  } catch (error) {
    process.stderr.write(`terminus serve: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (hooks.length === 0) {
    if (!context.stdio && !LOOPBACK.has(context.host)) {
      context.logger.warn(
        `serving ${context.host} without authentication: anyone who can reach this port can list the tools, ` +
          'start any of them (analyze_csv reads files below the data folder, build_report uses CPU for minutes), ' +
          'and read, answer or cancel any task whose id or 128-bit submission key they hold; ' +
          'pass --auth-tokens FILE or --auth-jwks with --auth-issuer and --auth-audience',
      );
    }
    return undefined;
  }
  return hooks.length === 1 ? hooks[0] : firstOf(...hooks);
}
