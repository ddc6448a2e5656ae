/**
 * A stdio server that `terminus call` or `terminus tools` started ends with the command, even when
 * the command is killed with SIGKILL (no exit handler runs). The server here never answers and
 * ignores its stdin closing, as a server behind a launcher (`npx -y pkg`) may: only the guard's
 * process-group kill ends it.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BUILT, killAll, start, tempDir } from './helpers.js';

const SLOW = 60_000;
const dir = tempDir('terminus-stdio-orphans-');
const SERVER = join(dir.path, 'silent-server.mjs');
const seen = new Set<number>();

beforeAll(() => {
  assertBuilt();
  // Reads stdin and never answers; its stdin closing does not end it (the interval keeps it alive).
  writeFileSync(SERVER, "process.stdin.on('data', () => {});\nsetInterval(() => {}, 60_000);\n");
});
afterAll(() => {
  for (const pid of seen) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  killAll();
  dir.remove();
});

/**
 * Pids of the processes whose command line names the silent server: with `servers`, only the
 * server itself (`node SERVER`); otherwise the guard that started it too (its arguments end with
 * the server's command).
 */
function silentServers(only: 'servers' | 'all' = 'servers'): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (only === 'servers' ? cmdline[1] === SERVER : cmdline.includes(SERVER)) found.push(Number(name));
    } catch {
      // ended while we read
    }
  }
  return found;
}

async function until(condition: () => boolean, rounds = 150): Promise<void> {
  for (let i = 0; i < rounds && !condition(); i++) await new Promise((r) => setTimeout(r, 100));
}

describe.each([
  { command: 'call', args: ['call', '--stdio', `node ${SERVER}`, 'anything', '--ledger', join(dir.path, 'l.db')] },
  { command: 'tools', args: ['tools', '--stdio', `node ${SERVER}`] },
])('terminus $command with a stdio server', ({ args }) => {
  it(
    'killed with SIGKILL: the server it started ends too',
    async () => {
      const before = new Set(silentServers('all'));
      const running = start([BUILT, ...args], { cwd: dir.path, input: '' });
      let started: number[] = [];
      await until(() => (started = silentServers().filter((pid) => !before.has(pid))).length > 0);
      expect(started).toHaveLength(1);
      // The server and the guard between it and the command: both must end.
      const mine = silentServers('all').filter((pid) => !before.has(pid));
      expect(mine).toEqual(expect.arrayContaining(started));
      for (const pid of mine) seen.add(pid);
      running.child.kill('SIGKILL');
      expect((await running.done).signal).toBe('SIGKILL');
      await until(() => silentServers('all').every((pid) => !mine.includes(pid)));
      expect(silentServers('all').filter((pid) => mine.includes(pid))).toEqual([]);
    },
    SLOW,
  );
});
