import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
  type JsonRpcResponse,
  type RawClientDispatch,
  type SerializedTaskReference,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXT, PROTOCOL, startServer, type TestServer } from './helpers.js';

/**
 * The official ext-tasks 0.2.2 client as a real client (reference 6.3): an SDK v2 Client pinned to
 * 2026-07-28 over Streamable HTTP, plus the raw dispatch the v2 task path needs.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const clientInfo = { name: 'terminus-ext-tasks-test', version: '1.0.0' };
const clientCapabilities = { elicitation: {}, extensions: { [EXT]: {} } };

/** POSTs one JSON-RPC request with the 2026-07-28 routing headers and reads JSON or SSE back. */
function rawDispatch(url: string): RawClientDispatch {
  let id = 1_000_000;
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
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      ...(options?.signal === undefined ? {} : { signal: options.signal }),
    });
    const text = await response.text();
    let reply: { id?: unknown; result?: unknown; error?: unknown } | undefined;
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      for (const line of text.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const parsed = JSON.parse(line.slice(5)) as { id?: unknown };
        if (parsed.id === message.id) reply = parsed;
      }
    } else {
      reply = JSON.parse(text) as typeof reply;
    }
    if (reply?.error !== undefined) return { kind: 'error', error: reply.error } as JsonRpcResponse;
    return { kind: 'result', result: reply?.result } as JsonRpcResponse;
  };
}

async function openSession(answer: Record<string, string | boolean> = {}): Promise<{
  session: TaskEnabledSession;
  client: Client;
  asked: string[];
}> {
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: { pin: PROTOCOL } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  const asked: string[] = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: 'terminus-test-endpoint',
    rawDispatch: rawDispatch(server.url),
    v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo, clientCapabilities },
    onInputRequest: createApplicationInputHandler({
      elicitation: (request) => {
        asked.push(JSON.stringify(request.params.message));
        return { action: 'accept', content: answer };
      },
      sampling: () => {
        throw new Error('no sampling in these tests');
      },
      roots: () => ({ roots: [] }),
    }),
  });
  return { session, client, asked };
}

function textOf(result: unknown): string {
  return ((result as { content: { text: string }[] }).content[0] as { text: string }).text;
}

describe('ext-tasks 0.2.2 client against terminus', () => {
  it('negotiates the v2 (extension) generation', async () => {
    const { session, client } = await openSession();
    expect(client.getProtocolEra()).toBe('modern');
    expect(session.capabilities).toMatchObject({ execution: true, cancellation: true, inputResponses: true });
    await session.close();
    await client.close();
  });

  it('X-02 calls a forbidden tool immediately and an optional one as a task that completes', async () => {
    const { session, client } = await openSession();
    const greet = await session.callTool('greet', { name: 'Ada' });
    expect(greet.kind).toBe('immediate');
    const greeting = await greet.result();
    expect(greeting.status === 'completed' && textOf(greeting.result)).toBe('Hello, Ada!');

    const slow = await session.callTool('slow_compute', { seconds: 1, label: 'ext' });
    expect(slow.kind).toBe('task');
    const outcome = await slow.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.status === 'completed' && textOf(outcome.result)).toBe('ext: done after 1 s');
    await session.close();
    await client.close();
  });

  it('X-22 X-23 a task input round goes through the input handler and tasks/update', async () => {
    const { session, client, asked } = await openSession({ confirm: true });
    const execution = await session.callTool('confirm_delete', { filename: 'report.pdf' });
    expect(execution.kind).toBe('task');
    const outcome = await execution.result();
    expect(outcome.status === 'completed' && textOf(outcome.result)).toBe('Deleted report.pdf');
    expect(asked).toEqual(['"Delete report.pdf?"']);
    await session.close();
    await client.close();
  });

  it('X-11 the MRTR round before task creation is answered by the same handler', async () => {
    const { session, client, asked } = await openSession({ name: 'Alice' });
    const execution = await session.callTool('test_tool_with_task', {});
    expect(execution.kind).toBe('task');
    const outcome = await execution.result();
    expect(outcome.status === 'completed' && textOf(outcome.result)).toBe('Hello, Alice!');
    expect(asked).toEqual(['"What is your name?"']);
    await session.close();
    await client.close();
  });

  it('X-37 cancel ends the task cancelled on the server', async () => {
    const { session, client } = await openSession();
    const execution = await session.callTool('slow_compute', { seconds: 60 });
    if (execution.kind !== 'task') throw new Error('expected a task');
    const taskId = execution.handle.taskId;
    await execution.cancel();
    const stored = await server.engine.get('anonymous', taskId);
    expect(stored.status).toBe('cancelled');
    await session.close();
    await client.close();
  });

  it('X-14 a running task handed off by reference is resumed from a new session and client', async () => {
    const first = await openSession();
    const execution = await first.session.callTool('slow_compute', { seconds: 3, label: 'resumed' });
    if (execution.kind !== 'task') throw new Error('expected a task');
    let reference: SerializedTaskReference | undefined;
    await execution.handoff((r) => {
      reference = JSON.parse(JSON.stringify(r)) as SerializedTaskReference;
    });
    expect(reference).toMatchObject({
      generation: 'v2',
      taskId: execution.handle.taskId,
      originalOperation: 'tools/call',
    });
    expect((await server.engine.get('anonymous', execution.handle.taskId)).status).toBe('working');

    const second = await openSession();
    const resumed = await second.session.resumeTask(reference!);
    expect(resumed.kind).toBe('task');
    const outcome = await resumed.result();
    expect(outcome.status === 'completed' && textOf(outcome.result)).toBe('resumed: done after 3 s');
    await second.session.close();
    await second.client.close();
    // Reference 6.2 pitfall 2: closing the handing-off session before it settles would cancel the task.
    await execution.result().catch(() => undefined);
    await first.session.close();
    await first.client.close();
  });
});
