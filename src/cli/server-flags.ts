/**
 * The flags every command that talks to a server shares: `--header K:V` (repeatable) and `--token T`
 * (or `TERMINUS_TOKEN`, which keeps the token out of `ps` and shell history), as MCP Inspector has.
 * Headers are never stored in the ledger: a resumed operation gets them from the resuming command.
 */
import { InvalidArgumentError, type Command } from 'commander';

export interface ServerFlags {
  readonly header: readonly string[];
  readonly token?: string;
}

function collectHeader(value: string, previous: readonly string[]): string[] {
  parseHeader(value);
  return [...previous, value];
}

function parseHeader(value: string): [string, string] {
  const colon = value.indexOf(':');
  const name = colon < 0 ? '' : value.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw new InvalidArgumentError(
      `expected NAME:VALUE, e.g. --header 'X-Api-Key: abc' (got ${JSON.stringify(value)})`,
    );
  }
  return [name.toLowerCase(), value.slice(colon + 1).trim()];
}

/** Adds `--header` and `--token` to a command. */
export function serverOptions(command: Command): Command {
  return command
    .option('--header <name:value>', 'extra HTTP header on every request (repeatable)', collectHeader, [])
    .option('--token <token>', 'bearer token for the Authorization header (default: $TERMINUS_TOKEN)');
}

/** The extra HTTP headers the flags (and `TERMINUS_TOKEN`) ask for; `--token` wins over the variable. */
export function headersOf(flags: ServerFlags, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of flags.header) {
    const [name, text] = parseHeader(value);
    headers[name] = text;
  }
  const token = flags.token ?? (env.TERMINUS_TOKEN === '' ? undefined : env.TERMINUS_TOKEN);
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return headers;
}
