/**
 * Status pushes of the bridge's native task front, with the real clients hosts are built on, in
 * front of `terminus serve --fixtures conformance`:
 * - the Tasks extension over Streamable HTTP: `subscriptions/listen` with `taskIds` gets
 *   `notifications/tasks` (a full DetailedTask) for working -> input_required -> completed, with no
 *   `tasks/get` in between; a non-declaring listen gets -32021;
 * - 2025-11-25 over stdio (SDK 1.32): `notifications/tasks/status` for the tasks the session made,
 *   input_required and completed, before the host polls at all (T-47);
 * - 2025-11-25 over HTTP (SDK 1.32): a session is offered task tools and pushed as on stdio;
 *   another caller, unknown and malformed ids get the wire's errors.
 */
import { Client as Client132 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Http132 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { postListen, rpc, sseMessages } from '../server/helpers.js';
import { ledgerFacts, stdioBridge132, upstreamTasks, useServeAndBridge } from './helpers.js';

const SLOW = 180_000;
const front = useServeAndBridge('terminus-bridge-pushes-', 'h.db');

interface Frame {
  method?: string;
  id?: unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
  params?: any;
  error?: { code: number };
}

/** A `subscriptions/listen` stream of task ids over HTTP: its frames as they come, and its close. */
async function listen(
  taskIds: unknown,
  options: { token?: string; declare?: boolean } = {},
): Promise<{
  status: number;
  frames: Frame[];
  until(done: (f: Frame[]) => boolean, ms?: number): Promise<void>;
  close(): void;
}> {
  const controller = new AbortController();
  const response = await postListen(front.url, taskIds, {
    ...options,
    id: 'sub-7',
    clientInfo: { name: 'push-test', version: '1.0.0' },
    signal: controller.signal,
  });
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    frames.push(JSON.parse(await response.text()) as Frame);
  } else {
    void (async () => {
      try {
        for await (const frame of sseMessages<Frame>(response.body!)) {
          frames.push(frame);
          for (const wake of waiters) wake();
        }
      } catch {
        // The stream was closed (by `close()` or the server): no more frames.
      }
    })();
  }
  return {
    status: response.status,
    frames,
    until: async (done, ms = 60_000) => {
      const deadline = Date.now() + ms;
      while (!done(frames) && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const wake = (): void => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          setTimeout(wake, 200);
        });
      }
    },
    close: () => controller.abort(),
  };
}

const taskFrames = (frames: Frame[], taskId: string): Frame[] =>
  frames.filter((f) => f.method === 'notifications/tasks' && f.params.taskId === taskId);
const statuses = (frames: Frame[], taskId: string): string[] =>
  taskFrames(frames, taskId).map((f) => f.params.status as string);

describe('bridge front pushes: Tasks extension over HTTP (subscriptions/listen)', () => {
  it(
    "X-67 X-41 a listen stream acks the caller's own ids only, then pushes working -> completed (a DetailedTask) with no poll",
    async () => {
      const created = await rpc(front.url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 2, label: 'push-ext' },
      });
      const taskId = created.result.taskId as string;
      const foreign = (
        await rpc(
          front.url,
          'tools/call',
          { name: 'slow_compute', arguments: { seconds: 1, label: 'push-other' } },
          { token: 'other' },
        )
      ).result.taskId as string;
      const stream = await listen([taskId, foreign, 'op_00000000-0000-4000-8000-000000000000', 'x'.repeat(300)]);
      expect(stream.status).toBe(200);
      await stream.until((f) => statuses(f, taskId).includes('completed'));
      stream.close();
      const [ack] = stream.frames;
      expect(ack?.method).toBe('notifications/subscriptions/acknowledged');
      // Another caller's task, an unknown id and a malformed one are left out, unnamed (S8).
      expect(ack?.params.notifications.taskIds).toEqual([taskId]);
      const seen = statuses(stream.frames, taskId);
      expect(seen[0]).toBe('working');
      expect(seen.at(-1)).toBe('completed');
      const done = taskFrames(stream.frames, taskId).at(-1)!;
      expect(done.params.result.content[0].text).toBe('push-ext: done after 2 s');
      expect(done.params._meta['io.modelcontextprotocol/subscriptionId']).toBe('sub-7');
      expect(
        stream.frames.some((f) => f.method === 'notifications/progress' || f.method === 'notifications/message'),
      ).toBe(false);
      expect(stream.frames.some((f) => f.method === 'notifications/tasks' && f.params.taskId === foreign)).toBe(false);
      expect(upstreamTasks(front.served.db, 'push-ext')).toBe(1);
      expect(ledgerFacts(front.ledger, 'push-ext')).toEqual({ operations: 1, receipts: 1 });
    },
    SLOW,
  );

  it(
    "X-16 X-27 the upstream's question is pushed as input_required with its inputRequests; tasks/update answers it and completed follows",
    async () => {
      const created = await rpc(front.url, 'tools/call', {
        name: 'confirm_delete',
        arguments: { filename: 'push-ask.txt' },
      });
      const taskId = created.result.taskId as string;
      const stream = await listen([taskId]);
      await stream.until((f) => statuses(f, taskId).includes('input_required'));
      const asked = taskFrames(stream.frames, taskId).find((f) => f.params.status === 'input_required')!;
      const keys = Object.keys(asked.params.inputRequests as object);
      expect(keys).toHaveLength(1);
      const update = await rpc(front.url, 'tasks/update', {
        taskId,
        inputResponses: { [keys[0]!]: { action: 'accept', content: { confirm: true } } },
      });
      expect(update.error).toBeUndefined();
      await stream.until((f) => statuses(f, taskId).includes('completed'));
      stream.close();
      const done = taskFrames(stream.frames, taskId).at(-1)!;
      expect(done.params.status).toBe('completed');
      expect(done.params.result.content[0].text).toBe('Deleted push-ask.txt');
    },
    SLOW,
  );

  it('X-40 a listen for task ids that does not declare the extension gets -32021; taskIds not a list of strings -32602', async () => {
    const refused = await listen(['op_x'], { declare: false });
    expect(refused.status).toBe(400);
    expect(refused.frames[0]?.error?.code).toBe(-32021);
    const malformed = await listen('op_x');
    expect(malformed.status).toBe(400);
    expect(malformed.frames[0]?.error?.code).toBe(-32602);
  });
});

/** An SDK 1.32 host of the bridge over stdio, declaring tasks and elicitation; pushes collected. */
async function stdioHost(ledger: string, extra: string[] = []) {
  const client = new Client132(
    { name: 'sdk-1.32-host', version: '1.0.0' },
    { capabilities: { tasks: {}, elicitation: {} } },
  );
  const pushed: { taskId: string; status: string; ttl: number | null }[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    pushed.push({ taskId: n.params.taskId, status: n.params.status, ttl: n.params.ttl });
  });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { confirm: true } }));
  await client.connect(stdioBridge132(front, ledger, extra));
  const pushesFor = async (taskId: string, status: string): Promise<string[]> => {
    for (let i = 0; i < 300 && !pushed.some((p) => p.taskId === taskId && p.status === status); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    return pushed.filter((p) => p.taskId === taskId).map((p) => p.status);
  };
  const createTask = async (name: string, args: Record<string, unknown>, task: Record<string, unknown> = {}) =>
    (await client.request({ method: 'tools/call', params: { name, arguments: args, task } }, CreateTaskResultSchema))
      .task;
  return { client, pushed, pushesFor, createTask };
}

describe('bridge front pushes: 2025-11-25 over stdio (SDK 1.32)', () => {
  it(
    'T-47 T-49 a task the session made is pushed working -> completed with no tasks/get at all',
    async () => {
      const host = await stdioHost('p1.db');
      try {
        const task = await host.createTask('slow_compute', { seconds: 2, label: 'push-2025' });
        expect(task.status).toBe('working');
        // No poll: the pushes alone say it ended.
        const seen = await host.pushesFor(task.taskId, 'completed');
        expect(seen.at(-1)).toBe('completed');
        expect(seen.filter((s) => s === 'completed')).toHaveLength(1);
        const result = await host.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
        expect((result.content[0] as { text: string }).text).toBe('push-2025: done after 2 s');
      } finally {
        await host.client.close();
      }
    },
    SLOW,
  );

  it(
    "T-47 T-39 the upstream's question is pushed as input_required; tasks/result asks the host and completed is pushed",
    async () => {
      const host = await stdioHost('p2.db');
      try {
        const task = await host.createTask('confirm_delete', { filename: 'push-2025-ask.txt' });
        expect(await host.pushesFor(task.taskId, 'input_required')).toContain('input_required');
        const result = await host.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
        expect((result.content[0] as { text: string }).text).toBe('Deleted push-2025-ask.txt');
        const seen = await host.pushesFor(task.taskId, 'completed');
        expect(seen.indexOf('input_required')).toBeLessThan(seen.indexOf('completed'));
      } finally {
        await host.client.close();
      }
    },
    SLOW,
  );
});

describe('bridge front: 2025-11-25 over Streamable HTTP (SDK 1.32)', () => {
  it(
    'T-01 T-03 T-47 a host with a session is offered task tools and pushed working -> input_required -> completed on its stream',
    async () => {
      const client = new Client132(
        { name: 'sdk-1.32-http-host', version: '1.0.0' },
        { capabilities: { tasks: {}, elicitation: {} } },
      );
      const pushed: { taskId: string; status: string }[] = [];
      client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
        pushed.push({ taskId: n.params.taskId, status: n.params.status });
      });
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { confirm: true } }));
      const transport = new Http132(new URL(front.url));
      await client.connect(transport);
      try {
        expect(transport.sessionId).toBeDefined();
        expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });
        const { tools } = await client.listTools();
        expect(tools.find((t) => t.name === 'slow_compute')?.execution).toEqual({ taskSupport: 'optional' });
        const { task } = await client.request(
          {
            method: 'tools/call',
            params: { name: 'confirm_delete', arguments: { filename: 'http-push.txt' }, task: {} },
          },
          CreateTaskResultSchema,
        );
        const seen = async (status: string): Promise<string[]> => {
          for (let i = 0; i < 300 && !pushed.some((p) => p.taskId === task.taskId && p.status === status); i++) {
            await new Promise((r) => setTimeout(r, 100));
          }
          return pushed.filter((p) => p.taskId === task.taskId).map((p) => p.status);
        };
        // No tasks/get: the question is pushed.
        expect(await seen('input_required')).toContain('input_required');
        const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
        expect((result.content[0] as { text: string }).text).toBe('Deleted http-push.txt');
        expect(await seen('completed')).toContain('completed');
        // The session is this caller's: another Authorization naming it gets 404.
        const stolen = await fetch(front.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': transport.sessionId!,
            'mcp-protocol-version': '2025-11-25',
            authorization: 'Bearer someone-else',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/get', params: { taskId: task.taskId } }),
        });
        expect(stolen.status).toBe(404);
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close();
      }
    },
    SLOW,
  );

  it(
    'T-15 T-68 a task call, its status and result over HTTP; another caller, an unknown and a malformed id get -32602; nothing stored',
    async () => {
      const connect = async (token?: string) => {
        const client = new Client132({ name: 'sdk-1.32-http-host', version: '1.0.0' }, { capabilities: { tasks: {} } });
        await client.connect(
          new Http132(
            new URL(front.url),
            token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
          ),
        );
        return client;
      };
      const host = await connect();
      const other = await connect('someone-else');
      try {
        const created = await host.request(
          {
            method: 'tools/call',
            params: { name: 'slow_compute', arguments: { seconds: 1, label: 'http-2025' }, task: {} },
          },
          CreateTaskResultSchema,
        );
        const taskId = created.task.taskId;
        expect(taskId).toMatch(/^op_/);
        const result = await host.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect((result.content[0] as { text: string }).text).toBe('http-2025: done after 1 s');
        expect((await host.experimental.tasks.getTask(taskId)).status).toBe('completed');
        const code = async (request: Promise<unknown>): Promise<number | undefined> =>
          request.then(
            () => undefined,
            (e: unknown) => (e instanceof McpError ? e.code : -1),
          );
        expect(await code(other.experimental.tasks.getTask(taskId))).toBe(-32602);
        expect(await code(host.experimental.tasks.getTask('op_00000000-0000-4000-8000-000000000000'))).toBe(-32602);
        expect(await code(host.request({ method: 'tasks/get', params: { taskId: 42 } }, CreateTaskResultSchema))).toBe(
          -32602,
        );
        expect(ledgerFacts(front.ledger, 'http-2025')).toEqual({ operations: 1, receipts: 1 });
      } finally {
        await host.close();
        await other.close();
      }
    },
    SLOW,
  );
});
