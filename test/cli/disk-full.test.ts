/**
 * `terminus call` and `terminus serve` on a full disk: the line names the file, SQLite's code and
 * how much room the folder has, never "cannot reach the server" or damage advice; nothing is
 * submitted while the ledger cannot record it, and the same command, once space is back, ends in
 * one task. A real 1 MiB tmpfs (mounting needs root, as CI is).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveBuilt, type BuiltServe } from '../fixtures/built-serve.js';
import { assertBuilt, built, killAll, tempDir } from './helpers.js';

const ROOT = process.getuid?.() === 0;
const SLOW = 120_000;

describe.skipIf(!ROOT)('a full disk under the CLI (skipped unless root: it mounts a tmpfs)', () => {
  const work = tempDir('terminus-disk-full-');
  let disk: string;
  let served: BuiltServe;
  const ledger = (): string => join(disk, 'ledger.db');
  const filler = (): string => join(disk, 'filler');
  /** Fills what is left of the tmpfs (a write past the end fails ENOSPC; what fitted stays). */
  const fill = (): void => {
    try {
      writeFileSync(filler(), Buffer.alloc(2 * 1024 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    const fs = statfsSync(disk);
    expect(fs.bavail * fs.bsize).toBe(0);
  };
  const tasksTitled = (title: string): number => {
    const db = new Database(join(work.path, 'server.db'), { readonly: true });
    try {
      return db.prepare('SELECT count(*) FROM tasks WHERE args LIKE ?').pluck().get(`%${title}%`) as number;
    } finally {
      db.close();
    }
  };
  const call = (title: string) =>
    built(
      [
        'call',
        '--url',
        served.url,
        'build_report',
        '--args',
        JSON.stringify({ title, sections: 2, sectionSeconds: 0.1 }),
        '--ledger',
        ledger(),
      ],
      { cwd: work.path },
    );

  beforeAll(async () => {
    assertBuilt();
    disk = mkdtempSync(join(tmpdir(), 'terminus-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk]);
    served = await serveBuilt(join(work.path, 'server.db'));
  });
  afterAll(() => {
    killAll();
    execFileSync('umount', [disk]);
    rmSync(disk, { recursive: true, force: true });
    work.remove();
  });

  it(
    'call on a full ledger disk: one line with the code and 0 bytes free, nothing submitted; after space is back the same command ends in one task',
    async () => {
      const first = await call('before');
      expect(first.code, first.stderr).toBe(0);
      fill();
      const refused = await call('while-full');
      expect(refused.code).toBe(1);
      // Before: "cannot reach URL: internal: ledger error (is the server running? check --url)", or,
      // when not even the shared-memory file fitted, quick_check's I/O error taken for damage.
      expect(refused.stderr).toMatch(
        new RegExp(
          `ledger ${ledger()}: ledger error: [^\\n]*\\((SQLITE_FULL|SQLITE_IOERR\\w*)\\); ${disk} has 0 bytes free: free some space, then run the command again`,
        ),
      );
      expect(refused.stderr).not.toMatch(/cannot reach|keep the file|\n\s+at /);
      expect(tasksTitled('while-full')).toBe(0);

      rmSync(filler());
      const again = await call('while-full');
      expect(again.code, again.stderr).toBe(0);
      expect(tasksTitled('while-full')).toBe(1);
    },
    SLOW,
  );

  it(
    'serve on a full disk: one line naming the database, the cause and 0 bytes free, exit 1',
    async () => {
      fill();
      try {
        const ran = await built(['serve', '--host', '127.0.0.1', '--port', '0', '--db', join(disk, 'tasks.db')], {
          cwd: work.path,
        });
        expect(ran.code).toBe(1);
        const lines = ran.stderr.split('\n').filter((line) => line.trim() !== '');
        expect(lines).toEqual([
          expect.stringMatching(
            new RegExp(
              `^terminus serve: database ${join(disk, 'tasks.db')}: .*; ${disk} has 0 bytes free: free some space, then run the command again$`,
            ),
          ),
        ]);
      } finally {
        rmSync(filler());
      }
    },
    SLOW,
  );
});
