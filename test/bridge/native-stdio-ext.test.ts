/**
 * The bridge's Tasks-extension front over stdio, as a 2026-07-28 host speaks it on the bridge's
 * stdin/stdout (newline-delimited JSON-RPC with the per-request envelope): a declaring `tools/call`
 * is a task of the bridge at once, `tasks/get` follows it, and a `subscriptions/listen` for its id
 * gets `notifications/tasks` for working -> completed with no poll; the listen ends with
 * `notifications/cancelled`; a non-declaring listen for tasks gets -32021.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, MAIN, ROOT, startServe, tempDir, tsNode, type Served } from '../cli/helpers.js';
import { EXT, PROTOCOL } from '../server/helpers.js';
import { ledgerFacts, upstreamTasks } from './helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-bridge-stdio-ext-');
let served: Served;
let bridge: ChildProcessWithoutNullStreams;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
type Message = { id?: unknown; method?: string; params?: any; result?: any; error?: { code: number } };
const received: Message[] = [];
let nextId = 1;

const envelope = (declare = true) => ({
  'io.modelcontextprotocol/protocolVersion': PROTOCOL,
  'io.modelcontextprotocol/clientInfo': { name: 'stdio-ext-host', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': declare ? { extensions: { [EXT]: {} } } : {},
});

function send(message: Record<string, unknown>): void {
  bridge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

async function until<T>(find: () => T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out; received ${JSON.stringify(received).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function request(method: string, params: Record<string, unknown>, declare = true): Promise<Message> {
  const id = nextId++;
  send({ id, method, params: { ...params, _meta: envelope(declare) } });
  return until(() => received.find((m) => m.id === id && m.method === undefined));
}

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
  bridge = spawn(
    process.execPath,
    tsNode(
      MAIN,
      'bridge',
      '--upstream',
      `reports=${served.url}`,
      '--ledger',
      join(dir.path, 's.db'),
      '--inline-wait',
      '1',
    ),
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  createInterface({ input: bridge.stdout }).on('line', (line) => {
    if (line.trim() !== '') received.push(JSON.parse(line) as Message);
  });
  const discovered = await request('server/discover', {});
  expect(discovered.result.capabilities.extensions).toHaveProperty([EXT]);
}, SLOW);
afterAll(async () => {
  bridge?.kill();
  await served?.stop();
  killAll();
  dir.remove();
});

describe('bridge front: Tasks extension over stdio', () => {
  it(
    'X-06 X-15 X-18 X-67 X-41 a task of the bridge at once; a listen pushes working -> completed with no poll; cancelled ends it',
    async () => {
      const created = await request('tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 2, label: 'stdio-ext' },
      });
      expect(created.result.resultType).toBe('task');
      const taskId = created.result.taskId as string;
      expect(taskId).toMatch(/^op_/);
      send({
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { taskIds: [taskId, 'op_00000000-0000-4000-8000-000000000000'] }, _meta: envelope() },
      });
      const ack = await until(() => received.find((m) => m.method === 'notifications/subscriptions/acknowledged'));
      expect(ack.params.notifications.taskIds).toEqual([taskId]);
      const pushed = (): Message[] =>
        received.filter((m) => m.method === 'notifications/tasks' && m.params.taskId === taskId);
      const done = await until(() => pushed().find((m) => m.params.status === 'completed'));
      expect(pushed()[0]?.params.status).toBe('working');
      expect(done.params.result.content[0].text).toBe('stdio-ext: done after 2 s');
      expect(done.params._meta['io.modelcontextprotocol/subscriptionId']).toBe('listen-1');
      // No tasks/get was sent before the push; the task reads the same now.
      const got = await request('tasks/get', { taskId });
      expect(got.result.status).toBe('completed');
      send({ method: 'notifications/cancelled', params: { requestId: 'listen-1' } });
      expect(upstreamTasks(served.db, 'stdio-ext')).toBe(1);
      expect(ledgerFacts(join(dir.path, 's.db'), 'stdio-ext')).toEqual({ operations: 1, receipts: 1 });
    },
    SLOW,
  );

  it('X-40 X-44 a listen for tasks that does not declare the extension gets -32021; an unknown id on tasks/get -32602', async () => {
    send({
      id: 'listen-2',
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: ['op_x'] }, _meta: envelope(false) },
    });
    const refused = await until(() => received.find((m) => m.id === 'listen-2'));
    expect(refused.error?.code).toBe(-32021);
    const unknown = await request('tasks/get', { taskId: 'op_00000000-0000-4000-8000-000000000000' });
    expect(unknown.error?.code).toBe(-32602);
  });
});
