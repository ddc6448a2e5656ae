import { closeSync, copyFileSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';

/**
 * What the WAL of a SQLite file holds, read before SQLite opens it (sqlite.org/fileformat2.html,
 * "WAL file format"). SQLite trusts a WAL up to its first frame that does not verify (its salts
 * match the header's and its checksum continues the chain from the header's) and keeps the
 * transactions up to the last commit frame before it. Everything after that is dropped without a
 * word, and so is the whole WAL when its header does not verify. This module reads what SQLite will
 * keep and what it will drop, and rebuilds a damaged header from the frames when they verify.
 */

export const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const WAL_MAGIC_LE = 0x377f0682;
const WAL_MAGIC_BE = 0x377f0683;
const WAL_VERSION = 3007000;

/** A verified WAL header. */
export interface WalHeader {
  readonly bigEndian: boolean;
  readonly pageSize: number;
  /** The salts as stored (bytes 16-23): every frame of this WAL generation repeats them. */
  readonly salts: Buffer;
  /** The header checksum: the seed of the frames' checksum chain. */
  readonly seed: readonly [number, number];
}

/** The header's fields if its magic, version, page size and checksum hold; else null. */
export function readWalHeader(head: Buffer): WalHeader | null {
  if (head.length < WAL_HEADER_BYTES) return null;
  const magic = head.readUInt32BE(0);
  if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) return null;
  if (head.readUInt32BE(4) !== WAL_VERSION) return null;
  const pageSize = head.readUInt32BE(8);
  if (!isPageSize(pageSize)) return null;
  const bigEndian = magic === WAL_MAGIC_BE;
  const seed = checksum(head, 0, 24, bigEndian, [0, 0]);
  if (head.readUInt32BE(24) !== seed[0] || head.readUInt32BE(28) !== seed[1]) return null;
  return { bigEndian, pageSize, salts: Buffer.from(head.subarray(16, 24)), seed };
}

function isPageSize(n: number): boolean {
  return n >= 512 && n <= 65536 && (n & (n - 1)) === 0;
}

/** SQLite's WAL checksum (wal.c `walChecksumBytes`) over `data[start, end)` in 8-byte steps, from `from`. */
function checksum(
  data: Buffer,
  start: number,
  end: number,
  bigEndian: boolean,
  from: readonly [number, number],
): [number, number] {
  let [s1, s2] = from;
  for (let i = start; i < end; i += 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    s1 = (s1 + x0 + s2) >>> 0;
    s2 = (s2 + x1 + s1) >>> 0;
  }
  return [s1, s2];
}

/** `checksum` run backwards: the state before `data[start, end)` that ends at `to`. */
function unchecksum(
  data: Buffer,
  start: number,
  end: number,
  bigEndian: boolean,
  to: readonly [number, number],
): [number, number] {
  let [s1, s2] = to;
  for (let i = end - 8; i >= start; i -= 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    s2 = (s2 - x1 - s1) >>> 0;
    s1 = (s1 - x0 - s2) >>> 0;
  }
  return [s1, s2];
}

/** What SQLite will keep of a WAL, and what follows it. */
export interface WalScan {
  readonly bytes: number;
  readonly frameBytes: number;
  /** Whole frames in the file. */
  readonly frames: number;
  /** Bytes after the last whole frame: a frame cut short. */
  readonly partialBytes: number;
  /** Frames up to and including the last commit frame of the verified prefix: what SQLite keeps. */
  readonly kept: number;
  /** Commit frames among them: the transactions SQLite keeps. */
  readonly transactions: number;
  /** Frames after `kept` of this WAL generation (its salts), verified or not: what SQLite drops. */
  readonly dropped: number;
  /**
   * Commit marks among the dropped frames that more frames of this generation follow: the writer
   * went on after each, so each was a transaction committed (and acknowledged) after the break, lost.
   * A mark on the very last frame is not counted: it may be a commit cut short by a crash.
   */
  readonly lostCommits: number;
  /** A dropped frame does not verify (a damaged or torn frame), rather than all being an unfinished transaction. */
  readonly broken: boolean;
  /** The cut-short frame is of this generation (or too short to tell), so it is dropped too. */
  readonly partialDropped: boolean;
}

/** Byte offset of frame `n` (1-based). */
export function frameOffset(n: number, pageSize: number): number {
  return WAL_HEADER_BYTES + (n - 1) * (FRAME_HEADER_BYTES + pageSize);
}

/** Walks the frames of an open WAL the way SQLite's recovery does, one frame in memory at a time. */
export function scanWal(fd: number, header: WalHeader): WalScan {
  const bytes = fstatSync(fd).size;
  const frameBytes = FRAME_HEADER_BYTES + header.pageSize;
  const frames = Math.max(0, Math.floor((bytes - WAL_HEADER_BYTES) / frameBytes));
  const partialBytes = Math.max(0, bytes - WAL_HEADER_BYTES - frames * frameBytes);
  const frame = Buffer.alloc(frameBytes);
  let chain: readonly [number, number] = header.seed;
  let kept = 0;
  let transactions = 0;
  let verified = 0;
  // The verified prefix: frames whose salts and chained checksum hold.
  for (let n = 1; n <= frames; n++) {
    readSync(fd, frame, 0, frameBytes, frameOffset(n, header.pageSize));
    if (frame.readUInt32BE(0) === 0 || !frame.subarray(8, 16).equals(header.salts)) break;
    const sum = checksum(frame, 24, frameBytes, header.bigEndian, checksum(frame, 0, 8, header.bigEndian, chain));
    if (frame.readUInt32BE(16) !== sum[0] || frame.readUInt32BE(20) !== sum[1]) break;
    chain = sum;
    verified = n;
    if (frame.readUInt32BE(4) !== 0) {
      kept = n;
      transactions++;
    }
  }
  // What follows the kept prefix and still carries this generation's salts is dropped.
  let dropped = 0;
  let marks = 0;
  let lastIsMark = false;
  let sameGeneration = true;
  for (let n = kept + 1; n <= frames; n++) {
    readSync(fd, frame, 0, FRAME_HEADER_BYTES, frameOffset(n, header.pageSize));
    if (!frame.subarray(8, 16).equals(header.salts)) {
      sameGeneration = false;
      break;
    }
    dropped++;
    lastIsMark = frame.readUInt32BE(4) !== 0;
    if (lastIsMark) marks++;
  }
  let partialDropped = false;
  if (partialBytes > 0 && sameGeneration) {
    const got = readSync(
      fd,
      frame,
      0,
      Math.min(partialBytes, FRAME_HEADER_BYTES),
      frameOffset(frames + 1, header.pageSize),
    );
    partialDropped = got < 16 || frame.subarray(8, 16).equals(header.salts);
  }
  const lostCommits = lastIsMark && !partialDropped ? marks - 1 : marks;
  return {
    bytes,
    frameBytes,
    frames,
    partialBytes,
    kept,
    transactions,
    dropped,
    lostCommits,
    broken: dropped > 0 && verified < kept + dropped,
    partialDropped,
  };
}

/**
 * A damaged header rebuilt from the first frame: the frame's stored checksum run backwards over its
 * content gives the header checksum that seeded it; the header's words are all known but the
 * checkpoint sequence (magic and version are constants, the page size is the database's, the salts
 * are the frame's), and the checksum over them pins that one down while fixing one more 32-bit
 * equation, which holds only if the first frame is intact. Tries each byte order and page size.
 * Returns the 32 bytes SQLite wrote, or null when no combination verifies.
 */
export function rebuildWalHeader(fd: number, dbPageSize: number | undefined): Buffer | null {
  const bytes = fstatSync(fd).size;
  const sizes = [
    ...new Set([...(dbPageSize !== undefined && isPageSize(dbPageSize) ? [dbPageSize] : []), ...PAGE_SIZES]),
  ];
  for (const pageSize of sizes) {
    const frameBytes = FRAME_HEADER_BYTES + pageSize;
    if (bytes < WAL_HEADER_BYTES + frameBytes) continue;
    const frame = Buffer.alloc(frameBytes);
    readSync(fd, frame, 0, frameBytes, WAL_HEADER_BYTES);
    if (frame.readUInt32BE(0) === 0) continue;
    for (const bigEndian of [false, true]) {
      const stored: [number, number] = [frame.readUInt32BE(16), frame.readUInt32BE(20)];
      const seed = unchecksum(frame, 0, 8, bigEndian, unchecksum(frame, 24, frameBytes, bigEndian, stored));
      const header = headerFor(seed, bigEndian, pageSize, frame.subarray(8, 16));
      if (header !== null) return header;
    }
  }
  return null;
}

const PAGE_SIZES = [4096, 512, 1024, 2048, 8192, 16384, 32768, 65536];

/** The header whose checksum is `seed`, if one exists with these fields (see `rebuildWalHeader`). */
function headerFor(
  seed: readonly [number, number],
  bigEndian: boolean,
  pageSize: number,
  salts: Buffer,
): Buffer | null {
  const head = Buffer.alloc(WAL_HEADER_BYTES);
  head.writeUInt32BE(bigEndian ? WAL_MAGIC_BE : WAL_MAGIC_LE, 0);
  head.writeUInt32BE(WAL_VERSION, 4);
  head.writeUInt32BE(pageSize, 8);
  salts.copy(head, 16);
  const word = (i: number): number => (bigEndian ? head.readUInt32BE(i) : head.readUInt32LE(i));
  // Forward over (magic, version), (page size, sequence), (salt-1, salt-2); solve for the sequence.
  const s1a = word(0);
  const s2a = (word(4) + s1a) >>> 0;
  const s2b = (seed[1] - word(20) - seed[0]) >>> 0;
  const s1b = (seed[0] - word(16) - s2b) >>> 0;
  if (s1b !== (s1a + word(8) + s2a) >>> 0) return null;
  const sequence = (s2b - s2a - s1b) >>> 0;
  if (bigEndian) head.writeUInt32BE(sequence, 12);
  else head.writeUInt32LE(sequence, 12);
  head.writeUInt32BE(seed[0], 24);
  head.writeUInt32BE(seed[1], 28);
  return readWalHeader(head) === null ? null : head;
}

/** The page size in a database file's header (bytes 16-17, big-endian; 1 means 65536), if readable. */
export function databasePageSize(path: string): number | undefined {
  const head = readAt(path, 0, 18);
  if (head === null || head.length < 18) return undefined;
  const raw = head.readUInt16BE(16);
  return raw === 1 ? 65536 : raw;
}

/** What the WAL-index (`-shm`) says of the WAL when it describes this generation of it. */
export interface WalIndexFacts {
  /** Frames committed to the WAL, as the last writer recorded them. */
  readonly mxFrame: number;
  /** Frames of them already copied into the database file by a checkpoint. */
  readonly backfilled: number;
}

/**
 * The WAL-index header (wal.c `WalIndexHdr`, in the machine's byte order, written twice) when both
 * copies agree, it is initialised, its checksum holds and its salts are `salts`; else undefined. A
 * process killed with `kill -9` leaves it behind; a copied or power-cut database usually does not.
 */
export function readWalIndex(path: string, salts: Buffer): WalIndexFacts | undefined {
  // A live writer rewrites the two copies one after the other: a read between them sees them differ.
  for (let attempt = 0; attempt < 3; attempt++) {
    const shm = readAt(`${path}-shm`, 0, 136);
    if (shm === null || shm.length < 136) return undefined;
    if (shm.subarray(0, 48).equals(shm.subarray(48, 96))) return indexFacts(shm, salts);
  }
  return undefined;
}

function indexFacts(shm: Buffer, salts: Buffer): WalIndexFacts | undefined {
  const first = shm.subarray(0, 48);
  if (first[12] !== 1) return undefined;
  const little = NATIVE_LITTLE_ENDIAN;
  const sum = checksum(first, 0, 40, !little, [0, 0]);
  const stored = little
    ? [first.readUInt32LE(40), first.readUInt32LE(44)]
    : [first.readUInt32BE(40), first.readUInt32BE(44)];
  if (stored[0] !== sum[0] || stored[1] !== sum[1] || !first.subarray(32, 40).equals(salts)) return undefined;
  const u32 = (buffer: Buffer, at: number): number => (little ? buffer.readUInt32LE(at) : buffer.readUInt32BE(at));
  return { mxFrame: u32(first, 16), backfilled: u32(shm, 96) };
}

const NATIVE_LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Copies the WAL aside, byte for byte, before anything changes it; returns the copy's path. */
export function keepCopy(wal: string, suffix: string): string {
  const copy = `${wal}.${suffix}`;
  copyFileSync(wal, copy);
  return copy;
}

/** Writes `header` over the first 32 bytes of the WAL and syncs it; the frames are not touched. */
export function writeWalHeader(fd: number, header: Buffer): void {
  writeSync(fd, header, 0, WAL_HEADER_BYTES, 0);
  fsyncSync(fd);
}

function readAt(path: string, position: number, length: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(length);
    return buffer.subarray(0, readSync(fd, buffer, 0, length, position));
  } finally {
    closeSync(fd);
  }
}
