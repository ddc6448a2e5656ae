import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Database as Db } from 'better-sqlite3';
import type { Logger } from '../core/ports.js';
import {
  databasePageSize,
  frameOffset,
  keepCopy,
  readWalHeader,
  readWalIndex,
  rebuildWalHeader,
  scanWal,
  WAL_HEADER_BYTES,
  writeWalHeader,
  type WalIndexFacts,
  type WalScan,
} from './sqlite-wal.js';

/**
 * The WAL check at open (issue 30): nothing SQLite is about to drop goes unsaid. Before SQLite
 * opens the file:
 *
 * - **a damaged header** (SQLite would treat the whole WAL as empty): the WAL is copied to
 *   `<db>-wal.damaged`, the header is rebuilt from the first frame (`rebuildWalHeader`), written over
 *   the first 32 bytes (the frames are not touched, and no file is swapped under another process
 *   that may hold it open), and SQLite then recovers every transaction whose frames verify. A
 *   first frame that does not verify leaves nothing to rebuild from: the loss is named instead.
 * - **frames dropped after the last commit SQLite keeps** (a file cut short, a damaged or torn
 *   frame, or a transaction a crash interrupted): the WAL is copied to `<db>-wal.torn` and they are
 *   named, with their count and byte offset. It is an error when committed transactions are
 *   certainly lost (commit marks after the break, or the WAL-index of a killed writer recording
 *   more committed frames than the file holds); a warning when the evidence cannot tell a lost
 *   commit from a transaction that never committed; nothing when the WAL-index agrees that all the
 *   committed frames are there (a `kill -9` mid-transaction, or another process writing now).
 */
export interface WalCheck {
  /** The header was rebuilt: SQLite must see at least this many frames once open (`confirmWalRepair`). */
  readonly rebuiltFrames?: number;
  readonly copy?: string;
}

export function checkWal(path: string, logger: Logger): WalCheck {
  const wal = `${path}-wal`;
  let size: number;
  try {
    size = statSync(wal).size;
  } catch {
    return {};
  }
  // Shorter than a header: a WAL being created right now by another process, or an empty one.
  if (size < WAL_HEADER_BYTES) return {};
  let fd: number;
  let writable = true;
  try {
    fd = openSync(wal, 'r+');
  } catch {
    writable = false; // still read and reported; a damaged header is then not rebuilt
    try {
      fd = openSync(wal, 'r');
    } catch {
      return {}; // unreadable: SQLite reports what it cannot open
    }
  }
  try {
    const head = Buffer.alloc(WAL_HEADER_BYTES);
    readSync(fd, head, 0, WAL_HEADER_BYTES, 0);
    const header = readWalHeader(head);
    if (header === null) return damagedHeader(path, wal, fd, size, writable, logger);
    // The index first: a live writer only moves it forward, so it never claims frames the file lacks.
    const index = readWalIndex(path, header.salts);
    const scan = scanWal(fd, header);
    reportDropped(path, scan, index, header.pageSize, logger);
    return {};
  } finally {
    closeSync(fd);
  }
}

function damagedHeader(
  path: string,
  wal: string,
  fd: number,
  size: number,
  writable: boolean,
  logger: Logger,
): WalCheck {
  const copy = keepCopy(wal, 'damaged');
  const rebuilt = rebuildWalHeader(fd, databasePageSize(path));
  if (rebuilt !== null && !writable) {
    logger.error(
      `damaged WAL header in ${wal}: its frames verify and the header could be rebuilt, but the file is read-only ` +
        `here, so SQLite discards all ${size} bytes of it; give this process write access and open it again. ` +
        `The WAL was copied to ${copy}`,
      { path, wal, copy, bytes: size },
    );
    return { copy };
  }
  if (rebuilt === null) {
    logger.error(
      `damaged WAL header in ${wal}, and its first frame does not verify either: SQLite discards all ${size} ` +
        'bytes of it, every transaction committed since the last checkpoint; restore the database from a backup ' +
        `if you have one. The WAL was copied to ${copy} (its frames are page images SQLite can no longer verify)`,
      { path, wal, copy, bytes: size },
    );
    return { copy };
  }
  writeWalHeader(fd, rebuilt);
  const header = readWalHeader(rebuilt);
  if (header === null) throw new Error('a rebuilt WAL header did not verify'); // rebuildWalHeader checked it
  const scan = scanWal(fd, header);
  const recovered = `${scan.transactions} transaction(s) (${scan.kept} frames) recovered`;
  const lost = droppedText(scan, header.pageSize);
  if (lost === undefined) {
    logger.warn(
      `damaged WAL header in ${wal}: rebuilt from its frames, whose checksums all verify: ${recovered}; ` +
        `the damaged file is kept as ${copy}`,
      { path, wal, copy, transactions: scan.transactions, frames: scan.kept },
    );
  } else {
    const commits =
      scan.lostCommits > 0 ? ` (at least ${scan.lostCommits} transaction(s) committed after the break among them)` : '';
    logger.error(
      `damaged WAL header in ${wal}: rebuilt from its frames: ${recovered}; ${lost}${commits}, and are lost; ` +
        `the damaged file is kept as ${copy}`,
      { path, wal, copy, transactions: scan.transactions, frames: scan.kept, dropped: scan.dropped },
    );
  }
  return { rebuiltFrames: scan.kept, copy };
}

function reportDropped(
  path: string,
  scan: WalScan,
  index: WalIndexFacts | undefined,
  pageSize: number,
  logger: Logger,
): void {
  const lost = droppedText(scan, pageSize);
  const missing = index === undefined ? 0 : index.mxFrame - scan.kept;
  if (lost === undefined && missing <= 0) return;
  // The index of the last writer agrees that every committed frame is here: what follows is a
  // transaction that never committed (a crash mid-write, or another process writing right now).
  if (index !== undefined && missing <= 0 && scan.lostCommits === 0) return;
  const wal = `${path}-wal`;
  const copy = keepCopy(wal, 'torn');
  const kept = `SQLite keeps ${scan.transactions} transaction(s) (${scan.kept} frames)`;
  if (missing > 0 || scan.lostCommits > 0) {
    const evidence =
      missing > 0
        ? `its WAL-index (${path}-shm) records ${index?.mxFrame} committed frames, the file holds ` +
          `${scan.kept}: ${missing} committed frame(s) are missing`
        : `at least ${scan.lostCommits} transaction(s) committed after the break are lost`;
    logger.error(
      `damaged WAL ${wal}: ${evidence}; ${kept}${lost === undefined ? '' : `; ${lost}`}. Restore the database ` +
        `from a backup if you have one; the WAL was copied to ${copy}`,
      { wal, copy, kept: scan.kept, transactions: scan.transactions, missing, lostCommits: scan.lostCommits },
    );
    return;
  }
  logger.warn(
    `WAL ${wal}: ${lost}: a transaction a crash interrupted (never acknowledged), or, if the file was cut ` +
      `or damaged, committed transactions lost (then restore the database from a backup if you have one); ${kept}; ` +
      `the WAL was copied to ${copy}`,
    { wal, copy, kept: scan.kept, transactions: scan.transactions, dropped: scan.dropped },
  );
}

/** "3 frames and 1,200 bytes after the last commit (from byte 8,232, 1 of them torn) are dropped", or undefined. */
function droppedText(scan: WalScan, pageSize: number): string | undefined {
  const partial = scan.partialDropped ? scan.partialBytes : 0;
  if (scan.dropped === 0 && partial === 0) return undefined;
  const from = frameOffset(scan.kept + 1, pageSize);
  const parts = [
    ...(scan.dropped > 0 ? [`${scan.dropped} frame(s)`] : []),
    ...(partial > 0 ? [`${partial} byte(s) of a frame cut short`] : []),
  ];
  const why = scan.broken ? ', some failing their checksum' : '';
  return `${parts.join(' and ')} after the last commit SQLite keeps (from byte ${from} to ${scan.bytes}${why}) are dropped`;
}

/**
 * After a rebuilt header, once SQLite has opened the file: a process that had it open before the
 * repair keeps the WAL-index it built from the damaged header (no frames), and SQLite then sees
 * none of the rebuilt ones. That is an error naming what to do, never a silent empty database.
 */
export function confirmWalRepair(db: Db, path: string, check: WalCheck, logger: Logger): void {
  if (check.rebuiltFrames === undefined || check.rebuiltFrames === 0) return;
  const row = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  const seen = row[0]?.log ?? 0;
  if (seen >= check.rebuiltFrames) return;
  logger.error(
    `${path}: the rebuilt WAL header is not in effect (SQLite sees ${seen} of ${check.rebuiltFrames} frames): ` +
      'another process had the database open before the repair; stop every process that uses it and start again',
    { path, seen, frames: check.rebuiltFrames, copy: check.copy },
  );
}
