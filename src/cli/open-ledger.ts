import { TerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import type { Ledger } from '../executor/ledger-port.js';
import { openPostgresLedger } from '../executor/ledger/postgres.js';
import { openSqliteLedger } from '../executor/ledger/sqlite.js';
import { defaultNodeId, isPostgresUrl, redact } from './open-store.js';
import { checkWritableFile, diskNote, PathError, sqliteOpenMessage } from './paths.js';

/**
 * Opens the ledger `--ledger` names: a `postgres://` / `postgresql://` URL is a PostgreSQL ledger
 * several executors share (migrations applied on open); anything else is a SQLite file, whose
 * folder is created (a read-only, damaged or foreign file, or a folder that cannot be made, rejects
 * a `PathError` naming the path, the reason and what to do; a damaged WAL copied aside is reported
 * on stderr as `<command>: ledger: ...`). Rejects a `TerminusError` with a one-line message:
 * `unavailable` when PostgreSQL cannot be reached, `invalid_argument` for an unsupported server or
 * URL scheme.
 */
export async function openLedger(location: string, command: string): Promise<Ledger> {
  if (isPostgresUrl(location)) {
    return openPostgresLedger({ connectionString: location, applicationName: `terminus executor ${defaultNodeId()}` });
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(location);
  if (scheme !== null) {
    throw new TerminusError(
      'invalid_argument',
      `unsupported ledger URL scheme ${scheme[1]}: (use postgres://, postgresql:// or a SQLite file path)`,
    );
  }
  if (location === ':memory:') return openSqliteLedger({ path: location });
  // Folders made for the ledger are the user's only (0700): it holds session ids.
  await checkWritableFile(location, 'ledger', 0o700);
  try {
    return openSqliteLedger({ path: location, logger: lineLogger(command) });
  } catch (error) {
    const message = sqliteOpenMessage(location, 'ledger', error);
    throw message === undefined ? error : new PathError(message);
  }
}

/** `openLedger` for the CLI: on failure writes `<command>: <reason>` to stderr and exits 1. */
export async function openLedgerOrExit(location: string, command: string): Promise<Ledger> {
  try {
    return await openLedger(location, command);
  } catch (error) {
    const internal = error instanceof TerminusError && error.code === 'internal';
    const message = internal ? ledgerFailure(location, error) : error instanceof Error ? error.message : String(error);
    process.stderr.write(`${command}: ${message.replaceAll('\n', ' ')}\n`);
    process.exit(1);
  }
}

/**
 * One line for an error of ours (a `TerminusError`: the ledger's, never the wire's, whose errors
 * are the SDK's) met while driving a call: `ledger <location>: <reason>`, so a full disk or a busy
 * file is not taken for a server that cannot be reached.
 */
export function ledgerFailure(location: string, error: TerminusError): string {
  const disk = isPostgresUrl(location) ? '' : diskNote(location, error);
  return `ledger ${redact(location)}: ${error.message.replaceAll('\n', ' ')}${disk}`;
}

/** The ledger's warnings and errors (a damaged WAL copied aside) as one stderr line each. */
function lineLogger(command: string): Logger {
  const line = (message: string): void => void process.stderr.write(`${command}: ledger: ${message}\n`);
  return { debug: () => undefined, info: () => undefined, warn: line, error: line };
}
