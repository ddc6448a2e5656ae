import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTask, isTerminalStatus, rpc } from './helpers.js';

/**
 * S9 across process death: `terminus serve` as a child process (tsx, so no build step), kill -9
 * mid-task, restart on the same SQLite file. Every `tasks/get` after the restart must succeed (never
 * "not found") until the task ends, exactly once, with its result.
 */
const root = new URL('../..', import.meta.url).pathname;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-crash-'));
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function serve(db: string, extra: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--db', db, ...extra],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  const stderr: Buffer[] = [];
  child.stderr.on('data', (c: Buffer) => stderr.push(c));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${Buffer.concat(stderr).toString()}`)), 30_000);
    createInterface({ input: child.stdout }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${Buffer.concat(stderr).toString()}`)));
  });
  const match = /^terminus listening on (http:\/\/127\.0\.0\.1:\d+\/mcp) \(db (.+)\)$/.exec(line);
  if (match === null) throw new Error(`unexpected first line: ${line}`);
  expect(match[2]).toBe(db);
  return { child, url: match[1] as string };
}

async function kill9(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Polls until `done`; every answer is recorded and must be a success. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
async function pollEvery(url: string, taskId: string, done: (t: any) => boolean, budgetMs: number): Promise<any[]> {
  const seen = [];
  const until = Date.now() + budgetMs;
  for (;;) {
    const answer = await rpc(url, 'tasks/get', { taskId });
    expect(answer.error, `tasks/get answered ${JSON.stringify(answer.error)}`).toBeUndefined();
    seen.push(answer.result);
    if (done(answer.result)) return seen;
    if (Date.now() > until) throw new Error(`still ${JSON.stringify(answer.result)} after ${budgetMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('crash and restart of terminus serve', () => {
  it('S9 X-09 a working task killed with -9 resumes from its checkpoint and completes once', async () => {
    const db = join(dir, 'working.db');
    const first = await serve(db);
    const taskId = await createTask(first.url, 'build_report', { sections: 6, sectionSeconds: 1, title: 'crash' });
    // Kill after at least two sections are checkpointed, before the last one.
    await pollEvery(first.url, taskId, (t) => (t._meta?.['mcp-terminus.dev/progress']?.done ?? 0) >= 2, 30_000);
    await kill9(first.child);

    const second = await serve(db);
    const seen = await pollEvery(second.url, taskId, isTerminalStatus, 60_000);
    const done = seen.at(-1);
    expect(done.status).toBe('completed');
    const report = done.result.structuredContent as { sections: { index: number }[]; attempt: number };
    expect(report.sections.map((s) => s.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(report.attempt).toBeGreaterThanOrEqual(2);
    expect(seen.filter((t) => isTerminalStatus(t)).every((t) => t.status === 'completed')).toBe(true);
    // Terminal is final: reading again later gives the same result.
    const again = await rpc(second.url, 'tasks/get', { taskId });
    expect(again.result.result).toEqual(done.result);
    await kill9(second.child);
  }, 120_000);

  it('S9 a task waiting in input_required survives kill -9 with its request, and the answer after restart completes it', async () => {
    const db = join(dir, 'input.db');
    const first = await serve(db, ['--fixtures', 'conformance']);
    const taskId = await createTask(first.url, 'confirm_delete', { filename: 'ledger.csv' });
    const [parked] = (await pollEvery(first.url, taskId, (t) => t.status === 'input_required', 15_000)).slice(-1);
    const keys = Object.keys(parked.inputRequests);
    expect(keys).toHaveLength(1);
    await kill9(first.child);

    const second = await serve(db, ['--fixtures', 'conformance']);
    const afterRestart = await rpc(second.url, 'tasks/get', { taskId });
    expect(afterRestart.error).toBeUndefined();
    expect(afterRestart.result.status).toBe('input_required');
    expect(Object.keys(afterRestart.result.inputRequests)).toEqual(keys);

    const ack = await rpc(second.url, 'tasks/update', {
      taskId,
      inputResponses: { [keys[0] as string]: { action: 'accept', content: { confirm: true } } },
    });
    expect(ack.result.resultType).toBe('complete');
    const seen = await pollEvery(second.url, taskId, isTerminalStatus, 60_000);
    expect(seen.at(-1).status).toBe('completed');
    expect(seen.at(-1).result.content[0].text).toBe('Deleted ledger.csv');
    await kill9(second.child);
  }, 120_000);

  it('SIGTERM stops the server gracefully (exit 0) and the db reopens', async () => {
    const db = join(dir, 'graceful.db');
    const first = await serve(db, ['--fixtures', 'conformance']);
    const taskId = await createTask(first.url, 'slow_compute', { seconds: 60 });
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const second = await serve(db, ['--fixtures', 'conformance']);
    const answer = await rpc(second.url, 'tasks/get', { taskId });
    expect(answer.result.status).toBe('working');
    await rpc(second.url, 'tasks/cancel', { taskId });
    await kill9(second.child);
  }, 60_000);
});
