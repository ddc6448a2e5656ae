import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc } from '../server/helpers.js';
import { build, eventually, exitCode, kill9, killAll, readEffects, runCli } from './nodes.js';

/** Whether process `pid` still exists (signal 0 tests without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Issue 14 item 5: `--workers N` runs the tool handlers in worker processes of the built CLI (what
// a user runs). A kill -9 of the server with tasks in its workers loses nothing: after a restart
// the task is re-run at epoch 2 from its checkpoint, here by `terminus worker --workers 2` behind
// a `serve --no-runner`, so both commands' flag is exercised; the killed server's workers end
// themselves. Issue 30: SIGTERM with a handler that ignores its signal stops the server.

async function started(
  args: readonly string[],
  cwd: string,
): Promise<{ child: ChildProcess; line: string; stderr: () => string }> {
  const { child, stderr } = runCli(args, cwd);
  const text = (): string => Buffer.concat(stderr).toString();
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]}: no first line; stderr: ${text()}`)), 20_000);
    createInterface({ input: child.stdout! }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited ${code}: ${text()}`));
    });
  });
  return { child, line, stderr: text };
}

const cwd = mkdtempSync(join(tmpdir(), 'terminus-threads-cli-'));
const db = join(cwd, '.terminus', 'tasks.db');
let url = '';

async function serve(extra: readonly string[]): Promise<{ child: ChildProcess; stderr: () => string }> {
  const node = await started(
    ['serve', '--port', '0', '--db', db, '--fixtures', 'cluster', '--node-id', 'server', ...extra],
    cwd,
  );
  url = /^terminus listening on (http:\/\/127\.0\.0\.1:\d+\/mcp) /.exec(node.line)?.[1] ?? '';
  expect(url).not.toBe('');
  return node;
}

async function submit(tool: string, args: Record<string, unknown>): Promise<string> {
  const answer = await rpc(url, 'tools/call', { name: tool, arguments: args });
  if (answer.result?.resultType !== 'task') throw new Error(`expected a task, got ${JSON.stringify(answer)}`);
  return answer.result.taskId as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
async function terminal(taskId: string): Promise<any> {
  return eventually(
    `${taskId} terminal`,
    async () => {
      const { result } = await rpc(url, 'tasks/get', { taskId });
      return ['completed', 'failed', 'cancelled'].includes(result?.status as string) ? result : undefined;
    },
    40_000,
    100,
  );
}

const effects = (taskId: string, kind: string) =>
  readEffects(cwd).filter((e) => e.taskId === taskId && e.kind === kind);

describe('terminus serve --workers 2 / terminus worker --workers 2 (built CLI, one SQLite file)', () => {
  beforeAll(() => build(), 180_000);
  afterAll(async () => {
    await killAll();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('handlers run in worker processes; a cancel reaches one; after kill -9 the workers end and the task re-runs at epoch 2 from its checkpoint', async () => {
    // A short lease: the killed server's task is claimable 1.5 s after its last heartbeat.
    const first = await serve(['--workers', '2', '--lease-ms', '1500']);
    await eventually('workers ready', () =>
      /handler workers ready .*count=2 .*heapMb=\d+/.test(first.stderr()) ? true : undefined,
    );

    const held = await submit('hold', { seconds: 120 });
    const start = await eventually('hold started', () => effects(held, 'started')[0], 20_000);
    expect(start.ppid).toBe(first.child.pid);
    expect(start.pid).not.toBe(first.child.pid);
    expect((await rpc(url, 'tasks/cancel', { taskId: held })).error).toBeUndefined();
    const aborted = await eventually('hold aborted in its worker', () => effects(held, 'aborted')[0], 20_000);
    expect(aborted.pid).toBe(start.pid);
    expect((await terminal(held)).status).toBe('cancelled');

    const long = await submit('count_effects', { steps: 8, stepMs: 250 });
    // A step's effect is written before its checkpoint: 3 effects prove the checkpoint {next: 2}.
    await eventually('three steps in a worker', () => (effects(long, 'effect').length >= 3 ? true : undefined), 20_000);
    await kill9(first.child);
    const stepsBefore = effects(long, 'effect');
    expect(stepsBefore.every((e) => e.epoch === 1 && e.ppid === first.child.pid)).toBe(true);
    // The killed server's workers notice their parent is gone and end themselves.
    const orphans = [...new Set(stepsBefore.map((e) => e.pid)), start.pid];
    await eventually('the orphaned workers gone', () => (orphans.some(alive) ? undefined : true), 10_000);

    await serve(['--no-runner']);
    const worker = await started(
      ['worker', '--db', db, '--fixtures', 'cluster', '--node-id', 'worker-a', '--workers', '2'],
      cwd,
    );
    const resumed = await terminal(long);
    expect(resumed.status).toBe('completed');
    const after = resumed.result.structuredContent as {
      pid: number;
      ppid: number;
      epoch: number;
      resumedFrom: number;
    };
    expect(after).toMatchObject({ ppid: worker.child.pid, epoch: 2 });
    expect(after.pid).not.toBe(worker.child.pid);
    expect(after.resumedFrom).toBeGreaterThanOrEqual(2);
    const epoch2 = effects(long, 'effect').filter((e) => e.epoch === 2);
    // Resumed from the checkpoint, not from step 0: epoch 2 starts where the last checkpoint was.
    expect(epoch2[0]?.step).toBe(after.resumedFrom);
    expect(epoch2.every((e) => e.ppid === worker.child.pid)).toBe(true);
  }, 150_000);

  it('SIGTERM with a handler that ignores its signal: the worker is killed after --abort-grace-ms and the server exits 0', async () => {
    const node = await started(
      [
        'serve',
        '--port',
        '0',
        '--db',
        join(cwd, 'hostile.db'),
        '--fixtures',
        'hostile',
        '--workers',
        '1',
        '--abort-grace-ms',
        '500',
      ],
      cwd,
    );
    const hostile = /^terminus listening on (http:\/\/127\.0\.0\.1:\d+\/mcp) /.exec(node.line)?.[1] ?? '';
    await eventually('workers ready', () => (/handler workers ready/.test(node.stderr()) ? true : undefined));
    const answer = await rpc(hostile, 'tools/call', { name: 'spin', arguments: { seconds: 600 } });
    const taskId = answer.result?.taskId as string;
    await eventually('the spin claimed', async () => {
      const { result } = await rpc(hostile, 'tasks/get', { taskId });
      return result?.status === 'working' ? true : undefined;
    });
    // Give the claim a moment to reach the worker: the kill must find a handler running.
    await eventually('the run started', () => (/task claimed/.test(node.stderr()) ? true : undefined));
    node.child.kill('SIGTERM');
    expect(await exitCode(node.child)).toBe(0);
    expect(node.stderr()).toContain('the handler ignored its aborted signal (shutdown) for 500 ms (abortGraceMs)');
  }, 60_000);

  it('the demo tools run in worker processes under serve --workers 1', async () => {
    const node = await started(['serve', '--port', '0', '--db', join(cwd, 'demo.db'), '--workers', '1'], cwd);
    const demo = /^terminus listening on (http:\/\/127\.0\.0\.1:\d+\/mcp) /.exec(node.line)?.[1] ?? '';
    await eventually('workers ready', () => (/handler workers ready/.test(node.stderr()) ? true : undefined));
    expect(node.stderr()).toMatch(/module=\S*dist\/tools\/demo\/index\.js/);
    const answer = await rpc(demo, 'tools/call', {
      name: 'build_report',
      arguments: { sections: 1, sectionSeconds: 0.2 },
    });
    const taskId = answer.result?.taskId as string;
    const done = await eventually(
      'report done',
      async () => {
        const { result } = await rpc(demo, 'tasks/get', { taskId });
        return result?.status === 'completed' ? result : undefined;
      },
      30_000,
      100,
    );
    expect(JSON.stringify(done.result)).toContain('section 1');
    await kill9(node.child);
  }, 60_000);
});
