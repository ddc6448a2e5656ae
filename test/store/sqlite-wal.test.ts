import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import type { Logger } from '../../src/core/ports.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { killAll, MAIN, start, tsNode } from '../cli/helpers.js';

/**
 * Issue 30: what SQLite would drop of a WAL without a word is detected and named at open, and
 * recovered where the frames verify. Real files: crash images (a live database and its WAL copied
 * before any checkpoint) and a writer killed with `kill -9` (its WAL-index left behind), then
 * damaged here: a damaged header, a truncated WAL, a damaged frame inside a sound WAL.
 */
const dir = mkdtempSync(join(tmpdir(), 'terminus-wal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => killAll());
let files = 0;
const fresh = (): string => join(dir, `db-${(files += 1)}.sqlite`);
const PAGE = 4096;
const FRAME = 24 + PAGE;
const frameAt = (n: number): number => 32 + (n - 1) * FRAME;

interface Logged {
  readonly level: 'warn' | 'error';
  readonly message: string;
}
function recording(): Logger & { readonly lines: Logged[] } {
  const lines: Logged[] = [];
  const none = (): void => undefined;
  return {
    lines,
    debug: none,
    info: none,
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
  };
}

const T0 = 1_800_000_000_000;
const newTask = (i: number) => ({
  id: `t-${String(i).padStart(2, '0')}`,
  owner: 'alice',
  tool: 'report',
  args: { i },
  requestDigest: requestDigest('report', { i }),
  submissionKey: null,
  wire: 'mcp-tasks-ext' as const,
  ttlMs: null,
  keepAliveMs: null,
  pollIntervalMs: 1000,
  now: T0 + i,
});

/** 20 committed tasks, one transaction each, that live only in the WAL of the copy. */
async function crashImage(): Promise<string> {
  const live = fresh();
  const store = await openSqliteTaskStore({ path: live });
  for (let i = 0; i < 20; i++) await store.create(newTask(i));
  const image = fresh();
  copyFileSync(live, image);
  copyFileSync(`${live}-wal`, `${image}-wal`);
  await store.close();
  return image;
}

/** A writer killed with kill -9 after 20 sequential creates: the database, its WAL and its WAL-index stay. */
async function killedWriter(): Promise<string> {
  const path = fresh();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'fixtures/sqlite-writer.ts'), path, '20', 'sequential'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`writer exited early (${code})`)));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  expect(existsSync(`${path}-shm`)).toBe(true);
  return path;
}

async function readable(path: string, logger: Logger): Promise<string[]> {
  const store = await openSqliteTaskStore({ path, logger });
  try {
    return (await store.list('alice', { limit: 100 }, T0 + 100)).tasks.map((t) => t.id).sort();
  } finally {
    await store.close();
  }
}

const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `t-${String(i).padStart(2, '0')}`);
const killedIds = (n: number): string[] => Array.from({ length: n }, (_, i) => `killed-${i}`);
const kept = (message: string): number => Number(/(\d+) transaction\(s\) \((\d+) frames\)/.exec(message)?.[1]);

describe('a damaged WAL header', () => {
  test('its checksum: the header is rebuilt from the frames, all 20 tasks are read, a warning names the copy', async () => {
    const image = await crashImage();
    const wal = readFileSync(`${image}-wal`);
    const damaged = Buffer.from(wal);
    damaged.writeUInt32BE(0xdeadbeef, 24);
    writeFileSync(`${image}-wal`, damaged);
    const logger = recording();
    expect(await readable(image, logger)).toEqual(ids(20));
    expect(logger.lines).toEqual([
      {
        level: 'warn',
        message: expect.stringMatching(
          new RegExp(
            `^damaged WAL header in ${image}-wal: rebuilt from its frames, whose checksums all verify: ` +
              `\\d+ transaction\\(s\\) \\(\\d+ frames\\) recovered; the damaged file is kept as ${image}-wal\\.damaged$`,
          ),
        ),
      },
    ]);
    // The copy is the damaged file byte for byte; the rebuilt header is the one SQLite wrote.
    expect(readFileSync(`${image}-wal.damaged`).equals(damaged)).toBe(true);
  });

  test('all 32 bytes zeroed (magic, page size, salts, checksum): rebuilt all the same', async () => {
    const image = await crashImage();
    const wal = readFileSync(`${image}-wal`);
    const original = Buffer.from(wal.subarray(0, 32));
    wal.fill(0, 0, 32);
    writeFileSync(`${image}-wal`, wal);
    const logger = recording();
    const store = await openSqliteTaskStore({ path: image, logger });
    // Rebuilt byte for byte before SQLite read it (checkpoint sequence included).
    expect(readFileSync(`${image}-wal`).subarray(0, 32).equals(original)).toBe(true);
    expect((await store.list('alice', { limit: 100 }, T0 + 100)).tasks).toHaveLength(20);
    await store.close();
    expect(logger.lines.map((l) => l.level)).toEqual(['warn']);
  });

  test('and a damaged frame in the middle: the transactions before it are recovered, the loss is an error', async () => {
    const image = await crashImage();
    const wal = readFileSync(`${image}-wal`);
    const frames = (wal.length - 32) / FRAME;
    wal.writeUInt32BE(0xdeadbeef, 24);
    const broken = Math.floor(frames / 2);
    wal.fill(0x5a, frameAt(broken) + 24 + 100, frameAt(broken) + 24 + 200); // inside the page
    writeFileSync(`${image}-wal`, wal);
    const logger = recording();
    const read = await readable(image, logger);
    expect(read.length).toBeGreaterThan(0);
    expect(read.length).toBeLessThan(20);
    expect(read).toEqual(ids(read.length)); // a prefix: nothing after the break
    expect(logger.lines).toHaveLength(1);
    const [line] = logger.lines;
    expect(line?.level).toBe('error');
    expect(line?.message).toMatch(/^damaged WAL header in .*-wal: rebuilt from its frames: \d+ transaction\(s\)/);
    expect(line?.message).toContain('some failing their checksum');
    expect(line?.message).toMatch(
      /\(at least (\d+) transaction\(s\) committed after the break among them\), and are lost/,
    );
    expect(line?.message).toContain(`to ${wal.length}`);
  });

  test('and a damaged first frame: nothing verifies, so nothing is rebuilt; an error names the loss and the copy', async () => {
    const image = await crashImage();
    const wal = readFileSync(`${image}-wal`);
    wal.writeUInt32BE(0xdeadbeef, 24);
    wal.fill(0x5a, frameAt(1) + 24 + 10, frameAt(1) + 24 + 20);
    writeFileSync(`${image}-wal`, wal);
    const logger = recording();
    expect(await readable(image, logger)).toEqual([]);
    expect(logger.lines).toEqual([
      {
        level: 'error',
        message:
          `damaged WAL header in ${image}-wal, and its first frame does not verify either: SQLite discards all ` +
          `${wal.length} bytes of it, every transaction committed since the last checkpoint; restore the database ` +
          `from a backup if you have one. The WAL was copied to ${image}-wal.damaged (its frames are page images ` +
          'SQLite can no longer verify)',
      },
    ]);
    expect(readFileSync(`${image}-wal.damaged`).equals(wal)).toBe(true);
  });
});

describe('a truncated WAL', () => {
  test('a copied database and WAL cut inside a frame: a warning names the frames dropped, the offset and the copy', async () => {
    const image = await crashImage();
    const size = statSync(`${image}-wal`).size;
    const frames = (size - 32) / FRAME;
    const cut = frameAt(Math.floor(frames / 2)) + 1000;
    truncateSync(`${image}-wal`, cut);
    const truncated = readFileSync(`${image}-wal`);
    const logger = recording();
    const read = await readable(image, logger);
    expect(read.length).toBeGreaterThan(0);
    expect(read.length).toBeLessThan(20);
    expect(logger.lines).toHaveLength(1);
    const [line] = logger.lines;
    expect(line?.level).toBe('warn');
    expect(line?.message).toMatch(
      new RegExp(
        `^WAL ${image}-wal: (\\d+ frame\\(s\\) and )?1000 byte\\(s\\) of a frame cut short after the last commit ` +
          `SQLite keeps \\(from byte \\d+ to ${cut}\\) are dropped: a transaction a crash interrupted \\(never ` +
          'acknowledged\\), or, if the file was cut or damaged, committed transactions lost \\(then restore the ' +
          'database from a backup if you have one\\); SQLite keeps \\d+ ' +
          `transaction\\(s\\) \\(\\d+ frames\\); the WAL was copied to ${image}-wal\\.torn$`,
      ),
    );
    expect(readFileSync(`${image}-wal.torn`).equals(truncated)).toBe(true);
  });

  test('after kill -9 of the writer: its WAL-index proves committed frames are missing, an error counts them', async () => {
    const path = await killedWriter();
    const size = statSync(`${path}-wal`).size;
    const frames = (size - 32) / FRAME;
    expect(Number.isInteger(frames)).toBe(true);
    const cut = frameAt(Math.floor(frames / 2)); // a frame boundary: the file alone cannot tell
    truncateSync(`${path}-wal`, cut);
    const logger = recording();
    const store = await openSqliteTaskStore({ path, logger });
    const read = (await store.list('alice', { limit: 100 }, T0 + 100)).tasks.length;
    await store.close();
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(20);
    expect(logger.lines).toHaveLength(1);
    const [line] = logger.lines;
    expect(line?.level).toBe('error');
    const keptFrames = Number(/the file holds (\d+)/.exec(line?.message ?? '')?.[1]);
    expect(line?.message).toContain(
      `damaged WAL ${path}-wal: its WAL-index (${path}-shm) records ${frames} committed frames, the file holds ` +
        `${keptFrames}: ${frames - keptFrames} committed frame(s) are missing;`,
    );
    expect(line?.message).toContain(`the WAL was copied to ${path}-wal.torn`);
  });

  test('after kill -9 with nothing damaged: every task is read and nothing is said', async () => {
    const path = await killedWriter();
    const logger = recording();
    const store = await openSqliteTaskStore({ path, logger });
    expect((await store.list('alice', { limit: 100 }, T0 + 100)).tasks.map((t) => t.id).sort()).toEqual(
      killedIds(20).sort(),
    );
    await store.close();
    expect(logger.lines).toEqual([]);
    expect(existsSync(`${path}-wal.torn`)).toBe(false);
  });
});

describe('a damaged frame inside a sound WAL', () => {
  test('what SQLite drops after it is named, with the transactions committed after the break', async () => {
    const image = await crashImage();
    const wal = readFileSync(`${image}-wal`);
    const frames = (wal.length - 32) / FRAME;
    const broken = Math.floor(frames / 2);
    wal.fill(0x5a, frameAt(broken) + 24 + 100, frameAt(broken) + 24 + 200);
    writeFileSync(`${image}-wal`, wal);
    const logger = recording();
    const read = await readable(image, logger);
    expect(read.length).toBeLessThan(20);
    expect(logger.lines).toHaveLength(1);
    const [line] = logger.lines;
    expect(line?.level).toBe('error');
    expect(line?.message).toMatch(
      new RegExp(
        `^damaged WAL ${image}-wal: at least (\\d+) transaction\\(s\\) committed after the break are lost; SQLite keeps`,
      ),
    );
    const lost = Number(/(\d+) transaction\(s\) committed after the break/.exec(line?.message ?? '')?.[1]);
    // Every task is its own transaction: the lost ones are the ones not read, but for the one the
    // damaged frame is in (its commit may be the break itself, so it is not counted).
    expect(lost + read.length).toBe(19);
    expect(kept(line?.message ?? '')).toBeGreaterThan(0);
  });
});

describe('terminus serve', () => {
  test('on a crash image with a damaged WAL header: starts, names the repair on stderr, serves the 20 tasks', async () => {
    const image = await crashImage();
    const wal = readFileSync(`${image}-wal`);
    wal.writeUInt32BE(0xdeadbeef, 24);
    writeFileSync(`${image}-wal`, wal);
    const serve = start(tsNode(MAIN, 'serve', '--db', image, '--port', '0'), { cwd: dir });
    const said = await serve.waitFor(
      /warn damaged WAL header in \S+: rebuilt from its frames, whose checksums all verify/,
      'stderr',
    );
    expect(said).toContain(`${image}-wal`);
    await serve.waitFor(/listening on/, 'stdout');
    serve.child.kill('SIGTERM');
    await serve.done;
    const store = await openSqliteTaskStore({ path: image });
    expect((await store.list('alice', { limit: 100 }, T0 + 100)).tasks).toHaveLength(20);
    await store.close();
  });
});
