/**
 * The bridge's native task front: `terminus bridge` in front of `terminus serve --fixtures
 * conformance`, met by the hosts that speak tasks (the ext-tasks client on the 2026-07-28 Tasks
 * extension over HTTP, the SDK 1.32 client on 2025-11-25 tasks over stdio) and by one that speaks
 * neither (an SDK 2.4 client: the facade, unchanged). One operation in the ledger whichever front a
 * call came by; the bridge's task ids are its own; bad ids get the wire's errors.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
  type JsonRpcResponse,
  type RawClientDispatch,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { Client as Client132 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio132 } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, MAIN, ROOT, start, startServe, tempDir, terminus, tsNode, type Served } from '../cli/helpers.js';
import { EXT, parseReply, PROTOCOL, rpc } from '../server/helpers.js';
import { connectBridge, ledgerFacts, operationOf, textOf, upstreamTasks } from './helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-bridge-native-');
let served: Served;
let url: string;
const ledger = (): string => join(dir.path, 'b.db');

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
  const bridge = start(
    tsNode(
      MAIN,
      'bridge',
      '--port',
      '0',
      '--upstream',
      `reports=${served.url}`,
      '--ledger',
      ledger(),
      '--inline-wait',
      '1',
    ),
    { cwd: dir.path },
  );
  url = (await bridge.waitFor(/http:\/\/127\.0\.0\.1:\d+\/mcp/, 'stdout')).trim();
}, SLOW);
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

const clientInfo = { name: 'bridge-native-test', version: '1.0.0' };
const clientCapabilities = { elicitation: {}, extensions: { [EXT]: {} } };

/** POSTs one framed request (the ext-tasks client's v2 path) and reads JSON or SSE back. */
function rawDispatch(target: string): RawClientDispatch {
  let id = 5_000_000;
  return async (request, options) => {
    const message = { jsonrpc: '2.0', id: id++, ...(request as { method: string; params?: { name?: string } }) };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': message.method,
      ...options?.context?.headers,
    };
    if (message.method === 'tools/call' && typeof message.params?.name === 'string') {
      headers['mcp-name'] = message.params.name;
    }
    const response = await fetch(target, {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      ...(options?.signal === undefined ? {} : { signal: options.signal }),
    });
    const reply = parseReply(await response.text(), response.headers.get('content-type') ?? '', message.id);
    if (reply?.error !== undefined) return { kind: 'error', error: reply.error } as JsonRpcResponse;
    return { kind: 'result', result: reply?.result };
  };
}

async function extSession(
  answer: Record<string, unknown> = { action: 'decline' },
  asked: string[] = [],
): Promise<{ session: TaskEnabledSession; client: Client }> {
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: { pin: PROTOCOL } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const session = createTaskSessionFromClient(client, {
    endpointId: 'bridge-native-test',
    rawDispatch: rawDispatch(url),
    v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo, clientCapabilities },
    onInputRequest: createApplicationInputHandler({
      elicitation: (request) => {
        asked.push(JSON.stringify(request.params.message).slice(1, -1));
        return answer as never;
      },
      sampling: () => {
        throw new Error('no sampling here');
      },
      roots: () => ({ roots: [] }),
    }),
  });
  return { session, client };
}

const firstText = (result: unknown): string =>
  ((result as { content: { text: string }[] }).content[0] as { text: string }).text;

describe('bridge front: Tasks extension (2026-07-28) with the ext-tasks client', () => {
  it(
    'X-02 X-06 a declaring host gets a task of the bridge at once, and its result; one operation, one upstream task',
    async () => {
      const { session, client } = await extSession();
      const call = await session.callTool('slow_compute', { seconds: 2, label: 'native-ext' });
      expect(call.kind).toBe('task');
      const taskId = (call as { taskId?: string }).taskId ?? (call as { task?: { taskId: string } }).task?.taskId;
      const outcome = await call.result();
      expect(outcome.status).toBe('completed');
      expect(outcome.status === 'completed' && firstText(outcome.result)).toBe('native-ext: done after 2 s');
      expect(upstreamTasks(served.db, 'native-ext')).toBe(1);
      expect(ledgerFacts(ledger(), 'native-ext')).toEqual({ operations: 1, receipts: 1 });
      if (taskId !== undefined) expect(taskId).toMatch(/^op_/);
      await session.close();
      await client.close();
    },
    SLOW,
  );

  it(
    'X-06 the bridge advertises the extension; a task, its retry and a facade call of the same call are one operation, its progress the statusMessage',
    async () => {
      const discovered = await rpc(url, 'server/discover');
      expect(discovered.result.capabilities.extensions).toHaveProperty([EXT]);
      const created = await rpc(url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 4, label: 'one-op' },
      });
      expect(created.result.resultType).toBe('task');
      const taskId = created.result.taskId as string;
      // The bridge's own id (the ledger operation), never the upstream's.
      expect(taskId).toMatch(/^op_[0-9a-f-]{36}$/);
      // A host retry of the same task call attaches.
      const again = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { label: 'one-op', seconds: 4 } });
      expect(again.result.taskId).toBe(taskId);
      expect(again.result._meta['mcp-terminus.dev/submission']).toEqual({ created: false });
      // A facade host (SDK 2.4, no extension) making the same call attaches too.
      const facade = new Client(clientInfo, { versionNegotiation: { mode: { pin: PROTOCOL } } });
      await facade.connect(new StreamableHTTPClientTransport(new URL(url)));
      const handle = await facade.callTool({
        name: 'slow_compute',
        arguments: { seconds: 4, label: 'one-op' },
      });
      expect(operationOf(handle)).toMatchObject({ id: taskId, attached: true });
      await facade.close();
      const said: string[] = [];
      for (let i = 0; i < 40; i++) {
        const got = await rpc(url, 'tasks/get', { taskId });
        said.push(got.result.statusMessage as string);
        if (got.result.status === 'completed') {
          expect(got.result.result.content[0].text).toBe('one-op: done after 4 s');
          break;
        }
        expect(got.result.status).toBe('working');
        await new Promise((r) => setTimeout(r, 500));
      }
      // The upstream's progress (0 of 4 s, "computing") is the task's statusMessage.
      expect(said).toContain('0/4: computing');
      expect(upstreamTasks(served.db, 'one-op')).toBe(1);
      expect(ledgerFacts(ledger(), 'one-op')).toEqual({ operations: 1, receipts: 1 });
    },
    SLOW,
  );

  it(
    "X-27 X-31 the upstream's question is the task's inputRequests; the host's tasks/update answers it",
    async () => {
      const asked: string[] = [];
      const { session, client } = await extSession({ action: 'accept', content: { confirm: true } }, asked);
      const call = await session.callTool('confirm_delete', { filename: 'ext-ask.txt' });
      expect(call.kind).toBe('task');
      const outcome = await call.result();
      expect(outcome.status === 'completed' && firstText(outcome.result)).toBe('Deleted ext-ask.txt');
      expect(asked).toEqual(['Delete ext-ask.txt?']);
      await session.close();
      await client.close();
    },
    SLOW,
  );

  it('X-44 X-45 X-47 foreign, unknown and malformed ids get the wire errors; a non-declaring request gets -32021', async () => {
    const created = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'owned' } });
    const taskId = created.result.taskId as string;
    const notFound = { code: -32602, message: 'Failed to retrieve task: Task not found' };
    // Another host of the same bridge (another Authorization) cannot see it: same answer as unknown.
    const foreign = await rpc(url, 'tasks/get', { taskId }, { token: 'someone-else' });
    expect(foreign.error).toMatchObject(notFound);
    expect((await rpc(url, 'tasks/cancel', { taskId }, { token: 'someone-else' })).error).toMatchObject(notFound);
    expect((await rpc(url, 'tasks/get', { taskId: 'op_00000000-0000-4000-8000-000000000000' })).error).toMatchObject(
      notFound,
    );
    expect((await rpc(url, 'tasks/get', { taskId: 'x'.repeat(300) })).error).toMatchObject(notFound);
    expect((await rpc(url, 'tasks/get', { taskId: 42 })).error?.code).toBe(-32602);
    expect((await rpc(url, 'tasks/get', { taskId }, { declare: false })).error?.code).toBe(-32021);
    // The owner still sees it.
    expect((await rpc(url, 'tasks/get', { taskId })).result.taskId).toBe(taskId);
  });

  it('X-37 X-39 C8 cancel is a request: acked, the ledger records CANCEL_REQUESTED, the task ends cancelled', async () => {
    const created = await rpc(url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 30, label: 'cancel-me' },
    });
    const taskId = created.result.taskId as string;
    const ack = await rpc(url, 'tasks/cancel', { taskId });
    expect(ack.result).toMatchObject({ resultType: 'complete' });
    let status = '';
    for (let i = 0; i < 40 && status !== 'cancelled'; i++) {
      status = (await rpc(url, 'tasks/get', { taskId })).result.status as string;
      if (status !== 'cancelled') await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe('cancelled');
    expect(ledgerFacts(ledger(), 'cancel-me')).toEqual({ operations: 1, receipts: 1 });
    const sqlite = new Database(ledger(), { readonly: true });
    const row = sqlite.prepare('SELECT * FROM operations WHERE id = ?').get(taskId);
    sqlite.close();
    expect(JSON.stringify(row)).toContain('CANCEL_REQUESTED');
    expect(upstreamTasks(served.db, 'cancel-me')).toBe(1);
  });
});

describe('bridge front: 2025-11-25 tasks with the SDK 1.32 client over stdio', () => {
  it(
    'T-01 T-15 T-47 a host that declares tasks gets task tools, a task of the bridge, its result and a status push',
    async () => {
      const client = new Client132({ name: 'sdk-1.32-host', version: '1.0.0' }, { capabilities: { tasks: {} } });
      const pushed: string[] = [];
      client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
        pushed.push(`${n.params.taskId}:${n.params.status}`);
      });
      await client.connect(
        new Stdio132({
          command: process.execPath,
          args: [...tsNode(MAIN, 'bridge', '--upstream', `reports=${served.url}`, '--ledger', join(dir.path, 's.db'))],
          cwd: ROOT,
          stderr: 'ignore',
        }),
      );
      try {
        expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });
        const { tools } = await client.listTools();
        expect(tools.find((t) => t.name === 'slow_compute')?.execution).toEqual({ taskSupport: 'optional' });
        const messages: { type: string; task?: { taskId: string }; result?: unknown }[] = [];
        for await (const message of client.experimental.tasks.callToolStream(
          { name: 'slow_compute', arguments: { seconds: 1, label: 'native-2025' } },
          CallToolResultSchema,
        )) {
          messages.push(message);
        }
        expect(messages[0]?.type).toBe('taskCreated');
        const taskId = messages[0]!.task!.taskId;
        expect(taskId).toMatch(/^op_/);
        expect(messages.at(-1)?.type).toBe('result');
        expect(firstText(messages.at(-1)!.result)).toBe('native-2025: done after 1 s');
        expect(upstreamTasks(served.db, 'native-2025')).toBe(1);
        for (let i = 0; i < 20 && !pushed.includes(`${taskId}:completed`); i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(pushed).toContain(`${taskId}:completed`);
        // T-68: an unknown id is -32602.
        const unknown = await client.experimental.tasks.getTask('op_nope').catch((e: unknown) => e);
        expect(unknown).toBeInstanceOf(McpError);
        expect((unknown as McpError).code).toBe(-32602);
      } finally {
        await client.close();
      }
    },
    SLOW,
  );

  it(
    "T-39 T-43 the upstream's question goes to a host that declared elicitation, on tasks/result",
    async () => {
      const client = new Client132(
        { name: 'sdk-1.32-host', version: '1.0.0' },
        { capabilities: { tasks: {}, elicitation: {} } },
      );
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { confirm: true } };
      });
      await client.connect(
        new Stdio132({
          command: process.execPath,
          args: tsNode(MAIN, 'bridge', '--upstream', `reports=${served.url}`, '--ledger', join(dir.path, 'e.db')),
          cwd: ROOT,
          stderr: 'ignore',
        }),
      );
      try {
        await client.listTools();
        const messages: { type: string; result?: unknown }[] = [];
        for await (const message of client.experimental.tasks.callToolStream(
          { name: 'confirm_delete', arguments: { filename: 'native-ask.txt' } },
          CallToolResultSchema,
        )) {
          messages.push(message);
        }
        expect(messages.at(-1)?.type).toBe('result');
        expect(firstText(messages.at(-1)!.result)).toBe('Deleted native-ask.txt');
        expect(asked).toEqual(['Delete native-ask.txt?']);
      } finally {
        await client.close();
      }
    },
    SLOW,
  );

  it(
    'T-03 a host that declares neither keeps the facade: no task capability, no execution, terminus_wait listed',
    async () => {
      const host = await connectBridge({ ledger: join(dir.path, 'f.db'), upstreams: [`reports=${served.url}`] });
      try {
        expect(host.client.getServerCapabilities()?.tasks).toBeUndefined();
        const { tools } = await host.client.listTools();
        expect(tools.some((t) => t.execution !== undefined)).toBe(false);
        expect(tools.map((t) => t.name)).toContain('terminus_wait');
        const result = await host.client.callTool({
          name: 'slow_compute',
          arguments: { seconds: 4, label: 'facade-host' },
        });
        expect(textOf(result)).toContain('terminus_wait');
      } finally {
        await host.close();
      }
    },
    SLOW,
  );
});

describe('bridge front: our own executor on 2025-11-25 over HTTP', () => {
  it(
    'T-01 terminus call --wire mcp-2025-11-25 declares tasks, so the bridge gives it a native task and it prints the result, not the facade handle',
    async () => {
      const ran = await terminus(
        [
          'call',
          '--url',
          url,
          '--wire',
          'mcp-2025-11-25',
          '--ledger',
          join(dir.path, 'cli.db'),
          'slow_compute',
          '--args',
          JSON.stringify({ seconds: 3, label: 'cli-2025' }),
        ],
        { cwd: dir.path },
      );
      expect(ran.stdout).not.toContain('terminus_wait');
      expect(ran.stdout).toContain('cli-2025: done after 3 s');
      expect(ran.code).toBe(0);
      expect(upstreamTasks(served.db, 'cli-2025')).toBe(1);
    },
    SLOW,
  );
});
