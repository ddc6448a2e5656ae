import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database, { SqliteError, type Database as Db } from 'better-sqlite3';
import { TerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { checkWal, confirmWalRepair, type WalCheck } from './sqlite-wal-check.js';

/**
 * Checks run when a SQLite store opens, so damaged storage is never silent (issue 12 item 10):
 * a file that is not a database, a database that fails `quick_check` (or the full
 * `integrity_check`), and tables or columns the applied migrations should have made are refused
 * with one line naming the file and the cause; and what SQLite would drop of the WAL without a word
 * (a damaged header: all of it; a cut or damaged tail: what follows the break) is repaired where
 * the frames verify, else copied aside and named (sqlite-wal-check.ts).
 */

/** The 16 bytes every SQLite 3 database file starts with. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * What is wrong with a refused file, in `details.damage`: `not_sqlite` (someone else's file: pass
 * another path), `corrupt` (a database whose pages are damaged: what it holds may be recovered, so
 * keep it), `schema` (tables the migrations made are gone).
 */
export type Damage = 'not_sqlite' | 'corrupt' | 'schema';

export function damaged(path: string, damage: Damage, cause: string, error?: unknown): TerminusError {
  return new TerminusError('storage_damaged', `${path}: ${cause}`, {
    ...(error === undefined ? {} : { cause: error }),
    details: { path, damage },
  });
}

/** SQLite's own refusal of a damaged file (not a database, malformed) as `storage_damaged`; else undefined. */
export function damageOf(path: string, error: unknown): TerminusError | undefined {
  const code = error instanceof SqliteError ? error.code : '';
  if (code === 'SQLITE_NOTADB') return damaged(path, 'not_sqlite', (error as Error).message, error);
  if (code.startsWith('SQLITE_CORRUPT')) return damaged(path, 'corrupt', (error as Error).message, error);
  return undefined;
}

/**
 * Opens a SQLite file behind the start-up checks: the header, the WAL (`checkWal`: a damaged header
 * rebuilt from verified frames, dropped frames named, each with a copy kept aside, reported to
 * `logger`), and `quick_check` (`integrity_check` with `full`); `:memory:` and `''` skip them.
 * Throws `invalid_argument` when the file's folder does not exist (nothing is created: the caller
 * chose the path), `storage_damaged` for damage, SQLite's own error otherwise.
 */
export function openCheckedDatabase(
  path: string,
  options: { readonly timeoutMs: number; readonly logger: Logger; readonly full: boolean },
): Db {
  const file = path !== ':memory:' && path !== '';
  let wal: WalCheck = {};
  if (file) {
    checkFolder(path);
    checkFileHeader(path);
    wal = checkWal(path, options.logger);
  }
  let db: Db;
  try {
    db = new Database(path, { timeout: options.timeoutMs });
  } catch (error) {
    throw damageOf(path, error) ?? error;
  }
  try {
    if (file) {
      confirmWalRepair(db, path, wal, options.logger);
      checkIntegrity(db, path, options.full);
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

function readHead(path: string, bytes: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null; // absent: a new database
  }
  try {
    const buffer = Buffer.alloc(bytes);
    const read = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Refuses a path whose folder is missing, naming it (SQLite's own words name neither). */
function checkFolder(path: string): void {
  const folder = dirname(resolve(path));
  if (existsSync(folder)) return;
  throw new TerminusError('invalid_argument', `${path}: the folder ${folder} does not exist; create it first`, {
    details: { path, field: 'path' },
  });
}

/** Refuses a non-empty file that does not start with the SQLite header (before SQLite touches it). */
function checkFileHeader(path: string): void {
  const head = readHead(path, SQLITE_HEADER.length);
  if (head === null || head.length === 0) return;
  if (!head.equals(SQLITE_HEADER)) {
    throw damaged(
      path,
      'not_sqlite',
      'not a SQLite database (the file does not start with "SQLite format 3"); refusing to open it',
    );
  }
}

/**
 * `PRAGMA quick_check` (O(database size), skips index-to-table cross checks) or, with `full`,
 * `integrity_check`; anything but `ok` is refused with SQLite's first complaint.
 */
function checkIntegrity(db: Db, path: string, full: boolean): void {
  const pragma = full ? 'integrity_check' : 'quick_check';
  let rows: string[];
  try {
    rows = (db.pragma(`${pragma}(10)`) as Record<string, unknown>[]).map((row) => String(Object.values(row)[0]));
  } catch (error) {
    // Malformed pages stop the check itself; any other error (a disk I/O error when the disk is
    // full) says nothing of the file and is not reported as damage.
    const damage = damageOf(path, error);
    if (damage === undefined) throw error;
    throw damaged(path, 'corrupt', `${pragma} could not run: ${(error as Error).message}`, error);
  }
  if (rows.length === 1 && rows[0] === 'ok') return;
  throw damaged(path, 'corrupt', `${pragma} failed: ${rows.slice(0, 3).join('; ')}${rows.length > 3 ? '; ...' : ''}`);
}
