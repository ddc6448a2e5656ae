/**
 * `terminus serve --stdio` and `terminus bridge` on stdio end when their client closes stdin, as
 * the MCP stdio binding asks ("the client SHOULD close the server's input stream, then wait for it
 * to exit"): the process does not linger after its host has gone, and what the client created is
 * kept for the next start. Before, the server outlived its host until a SIGTERM came.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BUILT, killAll, start, tempDir, type Running } from './helpers.js';

const SLOW = 60_000;
const dir = tempDir('terminus-serve-stdio-exit-');
const db = join(dir.path, 'tasks.db');

beforeAll(() => assertBuilt());
afterAll(() => {
  killAll();
  dir.remove();
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: { tasks: {} }, clientInfo: { name: 't', version: '1' } },
};

/** Writes one JSON-RPC line and waits for the answer line with its id. */
async function ask(running: Running, message: { id: number }): Promise<Record<string, unknown>> {
  running.child.stdin!.write(`${JSON.stringify(message)}\n`);
  const line = await running.waitFor(new RegExp(`^\\{.*"id":${message.id}\\}$`, 'm'), 'stdout');
  return JSON.parse(line) as Record<string, unknown>;
}

/** Ends stdin; resolves with the exit, or with 'lingering' if the process is still there after 10 s. */
async function endStdin(running: Running): Promise<{ code: number | null; stderr: string } | 'lingering'> {
  running.child.stdin!.end();
  const timer = new Promise<'lingering'>((resolve) => setTimeout(() => resolve('lingering'), 10_000).unref());
  const ran = await Promise.race([running.done, timer]);
  if (ran === 'lingering') running.child.kill('SIGKILL');
  return ran === 'lingering' ? ran : { code: ran.code, stderr: ran.stderr };
}

describe('terminus serve --stdio', () => {
  it(
    'exits 0 when its client closes stdin, and the task it created is there on the next start',
    async () => {
      const first = start([BUILT, 'serve', '--stdio', '--db', db], { cwd: dir.path });
      await ask(first, initialize);
      const created = await ask(first, {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'build_report', arguments: {}, task: { ttl: 600_000 } },
      } as { id: number });
      const taskId = (created.result as { task: { taskId: string } }).task.taskId;
      const ended = await endStdin(first);
      expect(ended).not.toBe('lingering');
      expect(ended).toMatchObject({ code: 0 });
      expect((ended as { stderr: string }).stderr).toMatch(/stdin closed: stopping/);

      const second = start([BUILT, 'serve', '--stdio', '--db', db], { cwd: dir.path });
      await ask(second, initialize);
      const got = await ask(second, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } } as {
        id: number;
      });
      expect(got.result).toMatchObject({ taskId });
      expect(await endStdin(second)).toMatchObject({ code: 0 });
    },
    SLOW,
  );

  it(
    'a SIGTERM right after stdin closes (SDK hosts send one) lets that shutdown finish: exit 0, not 1',
    async () => {
      const running = start([BUILT, 'serve', '--stdio', '--db', join(dir.path, 'term.db')], { cwd: dir.path });
      await ask(running, initialize);
      running.child.stdin!.end();
      await running.waitFor(/stdin closed: stopping/, 'stderr');
      running.child.kill('SIGTERM');
      const ran = await running.done;
      expect(ran.code).toBe(0);
      expect(ran.stderr).not.toMatch(/exiting now/);
    },
    SLOW,
  );
});

describe('terminus bridge on stdio', () => {
  it(
    'exits 0 when its host closes stdin',
    async () => {
      const upstream = start([BUILT, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', join(dir.path, 'up.db')], {
        cwd: dir.path,
      });
      const url = (await upstream.waitFor(/http:\/\/127\.0\.0\.1:\d+\/mcp/, 'stdout')).trim();
      const bridge = start([BUILT, 'bridge', '--upstream', `up=${url}`, '--ledger', join(dir.path, 'bridge.db')], {
        cwd: dir.path,
      });
      await bridge.waitFor(/terminus bridge on stdio/, 'stderr');
      await ask(bridge, initialize);
      expect(await endStdin(bridge)).toMatchObject({ code: 0 });
      upstream.child.kill('SIGTERM');
      await once(upstream.child, 'close');
    },
    SLOW,
  );
});
