import type { Logger } from '../core/ports.js';
import {
  adoptLegacyOwners,
  createBearerAuth,
  createJwtAuth,
  firstOf,
  readJwks,
  readTokensFile,
  type Authenticate,
} from '../server/auth/index.js';
import { jwtPrincipal, tokenPrincipal } from '../server/owner.js';
import type { TaskStore } from '../store/port.js';

/** `terminus serve --auth-*` flags (issue 12 item 2). */
export interface AuthFlags {
  readonly authTokens?: string;
  readonly authJwks?: string;
  readonly authIssuer?: string;
  readonly authAudience?: string;
  /** Which source created the tasks stored as `auth:<clientId>`; `none`: leave them to no one. */
  readonly legacyOwners?: AuthSource | 'none';
}

/** Where a principal comes from: `--auth-tokens` (`token:<id>`) or `--auth-jwks` (`jwt:<issuer>#<sub>`). */
export type AuthSource = 'token' | 'jwt';
export const LEGACY_OWNERS = ['token', 'jwt', 'none'] as const;

/** The sources the flags configure. */
function sourcesOf(flags: AuthFlags): AuthSource[] {
  return [
    ...(flags.authTokens === undefined ? [] : (['token'] as const)),
    ...(flags.authJwks === undefined ? [] : (['jwt'] as const)),
  ];
}

/** A source's principal of `id`: `token:<id>`, or `jwt:<issuer>#<id>`. */
function principal(flags: AuthFlags, source: AuthSource, id: string): string {
  return source === 'token' ? tokenPrincipal(id) : jwtPrincipal(flags.authIssuer ?? '', id);
}

/**
 * `--console-operator` values as principals: `token:ID` and `jwt:SUB` name their source; a bare ID
 * names the one source configured, and is refused (an Error naming both forms) when both are.
 */
export function operatorPrincipals(flags: AuthFlags, values: readonly string[]): string[] {
  const sources = sourcesOf(flags);
  return values.map((value) => {
    const named = /^(token|jwt):(.+)$/.exec(value);
    if (named !== null) {
      const source = named[1] as AuthSource;
      if (!sources.includes(source)) {
        throw new Error(
          `--console-operator ${value} names ${source === 'token' ? '--auth-tokens' : '--auth-jwks'}, which is not given`,
        );
      }
      return principal(flags, source, named[2] as string);
    }
    if (sources.length !== 1) {
      throw new Error(
        `--console-operator ${value} is ambiguous with both --auth-tokens and --auth-jwks: write token:${value} or jwt:${value}`,
      );
    }
    return principal(flags, sources[0] as AuthSource, value);
  });
}

/**
 * Before serving: gives the tasks stored as `auth:<clientId>` (before principals named their
 * source) to the source that made them, and says so. With one source configured they can only be
 * its own; with both, only `--legacy-owners` says which, and without it they are left (no caller
 * reaches them) with a warning naming the flag. Idempotent: a later start finds nothing to do.
 */
export async function adoptOwnersAtStart(flags: AuthFlags, store: TaskStore, logger: Logger): Promise<void> {
  const sources = sourcesOf(flags);
  if (sources.length === 0) return;
  const chosen = flags.legacyOwners ?? (sources.length === 1 ? sources[0] : undefined);
  const source = chosen === 'none' ? undefined : chosen;
  const to = source === undefined ? null : principal(flags, source, '');
  const report = await adoptLegacyOwners(store, to);
  if (report.adopted > 0) {
    logger.info(
      `owners: ${report.adopted} task(s) stored as auth:<client id> now belong to ${to ?? ''}<client id> ` +
        `(${source === 'token' ? '--auth-tokens' : '--auth-jwks'}): owners name their auth source`,
      { adopted: report.adopted, to },
    );
  }
  if (report.left > 0) {
    logger.warn(
      chosen === undefined
        ? `owners: ${report.left} task(s) stored as auth:<client id> belong to no caller: with both --auth-tokens ` +
            'and --auth-jwks an old auth:<id> could be either; start once with --legacy-owners token (or jwt) ' +
            'naming the source that created them'
        : chosen === 'none'
          ? `owners: ${report.left} task(s) stored as auth:<client id> are left to no caller (--legacy-owners none)`
          : `owners: ${report.left} task(s) stay stored as auth:<client id> because their new owner already ` +
            'holds the same submission key; no caller reaches them',
      { left: report.left },
    );
  }
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
    const legacy = flags.legacyOwners;
    if (legacy !== undefined && legacy !== 'none' && !sourcesOf(flags).includes(legacy)) {
      throw new Error(`--legacy-owners ${legacy} needs ${legacy === 'token' ? '--auth-tokens' : '--auth-jwks'}`);
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
