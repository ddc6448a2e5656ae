import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LOGS_METHOD } from '../../src/server/task-logs.js';
import { tempDir } from '../cli/helpers.js';
import { EXT, PROTOCOL } from '../server/helpers.js';
import type { Json } from './helpers.js';

/**
 * Issue 18 over stdio: `terminus serve --stdio` (demo tools) answers `terminus/tasks/logs` on the
 * 2025-11-25 wire (after `initialize`) and on the Tasks-extension wire (per-request envelope),
 * with raw JSON-RPC lines on the child's stdin and stdout.
 */
const root = new URL('../..', import.meta.url).pathname;
let dir: ReturnType<typeof tempDir>;
const children: ChildProcess[] = [];

beforeAll(() => {
  dir = tempDir('terminus-logs-stdio-');
});
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  dir.remove();
});

/** One `serve --stdio` process and a request function that matches answers by id. */
function stdio(db: string): {
  request(method: string, params?: Record<string, unknown>): Promise<Json>;
  notify(method: string): void;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--stdio', '--db', db], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  children.push(child);
  const waiting = new Map<number, (message: Json) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    if (typeof message.id === 'number') waiting.get(message.id)?.(message);
  });
  let id = 0;
  const write = (message: unknown): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
  return {
    request: (method, params = {}) =>
      new Promise((resolve) => {
        id += 1;
        waiting.set(id, resolve);
        write({ jsonrpc: '2.0', id, method, params });
      }),
    notify: (method) => write({ jsonrpc: '2.0', method, params: {} }),
  };
}

async function until(read: () => Promise<Json>, ok: (answer: Json) => boolean): Promise<Json> {
  const end = Date.now() + 30_000;
  for (;;) {
    const answer = await read();
    if (ok(answer)) return answer;
    if (Date.now() > end) throw new Error(`not reached: ${JSON.stringify(answer)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const RUN = { name: 'run_tests', arguments: { count: 4, failEvery: 2, pauseMs: 10 } };

describe('terminus/tasks/logs over stdio', () => {
  test('2025-11-25: the lines of run_tests, done once terminal; an unknown id is -32602', async () => {
    const rpc = stdio(join(dir.path, 'legacy.db'));
    const init = await rpc.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw-stdio', version: '1.0.0' },
    });
    expect(init.result.protocolVersion).toBe('2025-11-25');
    rpc.notify('notifications/initialized');
    const created = await rpc.request('tools/call', { ...RUN, task: {} });
    const taskId = created.result.task.taskId as string;
    const end = await until(
      () => rpc.request(LOGS_METHOD, { taskId }),
      (a) => a.result?.done === true,
    );
    expect(end.result.status).toBe('completed');
    expect(end.result.lines.map((l: Json) => l.text)).toEqual([
      'running 4 tests',
      'PASS test_001',
      'FAIL test_002: expected 2, got 3',
      'PASS test_003',
      'FAIL test_004: expected 4, got 5',
      '4 tests: 2 passed, 2 failed',
    ]);
    const unknown = await rpc.request(LOGS_METHOD, { taskId: 'no-such-task-0000000000' });
    expect(unknown.error.code).toBe(-32602);
    const bad = await rpc.request(LOGS_METHOD, { taskId, after: -1 });
    expect(bad.error.code).toBe(-32602);
  }, 60_000);

  test('Tasks extension: the same method with the per-request envelope; X-47: undeclared is -32021', async () => {
    const rpc = stdio(join(dir.path, 'modern.db'));
    const envelope = (declare: boolean) => ({
      'io.modelcontextprotocol/protocolVersion': PROTOCOL,
      'io.modelcontextprotocol/clientInfo': { name: 'raw-stdio', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': declare ? { extensions: { [EXT]: {} } } : {},
    });
    const created = await rpc.request('tools/call', { ...RUN, _meta: envelope(true) });
    expect(created.result?.resultType, JSON.stringify(created)).toBe('task');
    const taskId = created.result.taskId as string;
    const end = await until(
      () => rpc.request(LOGS_METHOD, { taskId, _meta: envelope(true) }),
      (a) => a.result?.done === true,
    );
    expect(end.result).toMatchObject({ taskId, status: 'completed', next: 6, dropped: 0 });
    expect(end.result.lines[2]).toMatchObject({
      seq: 3,
      epoch: 1,
      stream: 'log',
      text: 'FAIL test_002: expected 2, got 3',
      fields: { test: 'test_002', expected: 2, got: 3, status: 'fail' },
    });
    const undeclared = await rpc.request(LOGS_METHOD, { taskId, _meta: envelope(false) });
    expect(undeclared.error.code).toBe(-32021);
  }, 60_000);
});
