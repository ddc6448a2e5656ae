import { closeSync, copyFileSync, openSync, readSync, statSync } from 'node:fs';
import Database, { SqliteError, type Database as Db } from 'better-sqlite3';
import { TerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';

/**
 * Checks run when a SQLite store opens, so damaged storage is never silent (issue 12 item 10):
 * a file that is not a database, a database that fails `quick_check` (or the full
 * `integrity_check`), and tables or columns the applied migrations should have made are refused
 * with one line naming the file and the cause; a WAL whose header SQLite will ignore is copied aside
 * and reported as an error, because SQLite then silently drops every transaction in it.
 */

/** The 16 bytes every SQLite 3 database file starts with. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** WAL header magic numbers: the low bit says which byte order the checksums use. */
const WAL_MAGIC_LE = 0x377f0682;
const WAL_MAGIC_BE = 0x377f0683;
const WAL_VERSION = 3007000;
const WAL_HEADER_BYTES = 32;

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
 * Opens a SQLite file behind the start-up checks: the header, the WAL header (a damaged WAL is
 * copied aside and logged), and `quick_check` (`integrity_check` with `full`); `:memory:` and `''`
 * skip them. Throws `storage_damaged` for damage, SQLite's own error otherwise.
 */
export function openCheckedDatabase(
  path: string,
  options: { readonly timeoutMs: number; readonly logger: Logger; readonly full: boolean },
): Db {
  const file = path !== ':memory:' && path !== '';
  if (file) {
    checkFileHeader(path);
    preserveDamagedWal(path, options.logger);
  }
  let db: Db;
  try {
    db = new Database(path, { timeout: options.timeoutMs });
  } catch (error) {
    throw damageOf(path, error) ?? error;
  }
  try {
    if (file) checkIntegrity(db, path, options.full);
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
 * A WAL file whose 32-byte header is damaged (bad magic, version, page size or checksum) is
 * treated by SQLite as empty: every transaction committed in it since the last checkpoint is
 * dropped without an error, and the next write overwrites the file. Copies it to
 * `<path>-wal.damaged` first and logs an error naming both, so nothing is lost silently.
 * Returns the copy's path, or null when the WAL is absent, empty or sound.
 */
function preserveDamagedWal(path: string, logger: Logger): string | null {
  const wal = `${path}-wal`;
  let size: number;
  try {
    size = statSync(wal).size;
  } catch {
    return null;
  }
  // Shorter than a header: a WAL being created right now by another process, or an empty one.
  if (size < WAL_HEADER_BYTES) return null;
  const head = readHead(wal, WAL_HEADER_BYTES);
  if (head === null || walHeaderIsSound(head)) return null;
  const copy = `${wal}.damaged`;
  copyFileSync(wal, copy);
  logger.error(
    `damaged WAL header in ${wal}: SQLite discards the ${size} bytes of transactions in it (everything committed since the last checkpoint); the WAL was copied to ${copy}`,
    { path, wal, copy, bytes: size },
  );
  return copy;
}

function walHeaderIsSound(head: Buffer): boolean {
  const magic = head.readUInt32BE(0);
  if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) return false;
  if (head.readUInt32BE(4) !== WAL_VERSION) return false;
  const pageSize = head.readUInt32BE(8);
  const validPage = pageSize >= 512 && pageSize <= 65536 && (pageSize & (pageSize - 1)) === 0;
  if (!validPage) return false;
  const [s1, s2] = walChecksum(head.subarray(0, 24), magic === WAL_MAGIC_BE);
  return head.readUInt32BE(24) === s1 && head.readUInt32BE(28) === s2;
}

/** SQLite's WAL checksum (wal.c `walChecksumBytes`) over 8-byte steps. */
function walChecksum(data: Buffer, bigEndian: boolean): [number, number] {
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < data.length; i += 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    s1 = (s1 + x0 + s2) >>> 0;
    s2 = (s2 + x1 + s1) >>> 0;
  }
  return [s1, s2];
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
