/**
 * Issue 11, defect 5: a stdio server is the executor's child. `close()` ends it (stdin, SIGTERM,
 * SIGKILL, as the SDK's stdio client) together with whatever it started (a launcher's server, as
 * `npx -y pkg` starts one); a child that dies while an operation waits is seen at once: the
 * operation is taken up over a new connection and goes the usual way (the new server does not know
 * the task: UNKNOWN), never an endless wait at CANCEL_REQUESTED. Against server-everything run by
 * its node entry (so the pid is the server's), and behind a node launcher.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { createStdioConnection } from '../../src/executor/adapters/stdio-channel.js';
import { negotiate } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Executor } from '../../src/executor/executor-types.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { EVERYTHING, tempDir } from '../cli/helpers.js';

const dir = tempDir('terminus-stdio-child-');
afterAll(() => dir.remove());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, what: string): Promise<void> {
  for (let i = 0; i < 200 && alive(pid); i++) await sleep(50);
  expect(alive(pid), `${what} (pid ${pid}) still running`).toBe(false);
}

/** An executor whose connector spawns `command args` and records every spawned pid. */
async function open(command: string, args: string[]): Promise<{ executor: Executor; ledger: Ledger; pids: number[] }> {
  const pids: number[] = [];
  const ledger = createMemoryLedger();
  const executor = await createExecutor({
    ledger,
    connect: async () => {
      const connection = await createStdioConnection({ command, args, stderr: 'ignore', clock: systemClock });
      if (connection.pid !== undefined) pids.push(connection.pid);
      return negotiate(connection, { clock: systemClock });
    },
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
    policy: { minPollIntervalMs: 100, backoffBaseMs: 100 },
  });
  return { executor, ledger, pids };
}

const RESEARCH = { callNodeId: 'd5', server: 'e', tool: 'simulate-research-query', args: { topic: 'tides' } };

describe('the stdio child of the executor', () => {
  it('close() ends the server process', async () => {
    const { executor, pids } = await open(process.execPath, [EVERYTHING, 'stdio']);
    const op = await executor.submit({ callNodeId: 'd5-echo', server: 'e', tool: 'echo', args: { message: 'x' } });
    expect((await op.result()).status).toBe('completed');
    expect(pids).toHaveLength(1);
    expect(alive(pids[0]!)).toBe(true);
    await executor.close();
    await gone(pids[0]!, 'server-everything');
  }, 60_000);

  it('close() behind a launcher (as npx -y starts one) ends the launcher and the server it started', async () => {
    const pidFile = join(dir.path, 'server.pid');
    // A launcher that starts the server on its own stdio, plus a helper of its own that never reads
    // stdin (so closing stdin does not end it) and is never signalled by a kill of the launcher's pid.
    const launcher = join(dir.path, 'launcher.mjs');
    writeFileSync(
      launcher,
      `import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const server = spawn(process.execPath, [${JSON.stringify(EVERYTHING)}, 'stdio'], { stdio: 'inherit' });
const helper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
writeFileSync(${JSON.stringify(pidFile)}, JSON.stringify([server.pid, helper.pid]));
server.on('exit', (code) => process.exit(code ?? 0));
`,
    );
    const { executor, pids } = await open(process.execPath, [launcher]);
    const op = await executor.submit({ callNodeId: 'd5-l', server: 'e', tool: 'echo', args: { message: 'y' } });
    expect((await op.result()).status).toBe('completed');
    expect(existsSync(pidFile)).toBe(true);
    const [server, helper] = JSON.parse(readFileSync(pidFile, 'utf8')) as [number, number];
    expect(alive(helper)).toBe(true);
    try {
      await executor.close();
      await gone(pids[0]!, 'the launcher');
      await gone(server, 'the server the launcher started');
      await gone(helper, "the launcher's helper (an orphan)");
    } finally {
      if (alive(helper)) process.kill(helper, 'SIGKILL');
    }
  }, 60_000);

  it('a server that dies while a cancel is owed: seen at once, the operation ends in UNKNOWN, not CANCEL_REQUESTED', async () => {
    const { executor, ledger, pids } = await open(process.execPath, [EVERYTHING, 'stdio']);
    try {
      const op = await executor.submit(RESEARCH);
      for (let i = 0; i < 200 && (await ledger.loadByCallNode('d5'))?.state !== 'WORKING'; i++) await sleep(25);
      expect((await ledger.loadByCallNode('d5'))?.state).toBe('WORKING');
      process.kill(pids[0]!, 'SIGKILL');
      expect((await op.cancel()).requested).toBe(true);
      await expect(op.result()).rejects.toMatchObject({ code: 'unknown' });
      const record = await ledger.loadByCallNode('d5');
      expect(record?.state).toBe('UNKNOWN');
      expect(record?.evidence.map((e) => e.kind)).toContain('not_found');
      // The operation was taken up over a second server process.
      expect(pids).toHaveLength(2);
    } finally {
      await executor.close();
    }
    for (const pid of pids) await gone(pid, 'a server process');
  }, 60_000);
});
