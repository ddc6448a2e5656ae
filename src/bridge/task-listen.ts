/**
 * `subscriptions/listen` with `notifications.taskIds` on the bridge's HTTP front (Tasks extension,
 * reference 2.7). The SDK's handler routes listen requests itself and can neither refuse task
 * notifications nor publish them (reference 5.5), so the bridge answers such a request
 * before the SDK sees it:
 * - a request that does not declare the extension: `-32021` (HTTP 400) naming it;
 * - `taskIds` that is not an array of strings: `-32602`;
 * - otherwise an SSE stream: first `notifications/subscriptions/acknowledged` listing the requested
 *   ids that are this caller's tasks (others are left out silently: no existence oracle, S8), then
 *   each watched task as it stands and one `notifications/tasks` (a full `DetailedTask`) per change
 *   (`TaskPushes`), never progress or log messages. Every message carries the subscription id.
 * Listen requests without `taskIds` go to the SDK unchanged (`undefined`). Over HTTP the stream is
 * SSE (`answerTaskListen`); over stdio (`stdio-listen.ts`) the messages go on the connection and
 * `notifications/cancelled` naming the listen request ends it.
 */
import { CLIENT_CAPABILITIES_META_KEY, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import { TASKS_EXTENSION } from '../server/wire/tasks-ext/constants.js';
import { encodeDetailedTask } from '../server/wire/tasks-ext/encode.js';
import type { TaskRecord } from '../core/task.js';
import type { TaskFront } from './task-front.js';
import type { TaskPushes } from './task-pushes.js';

/** Ids one stream may watch; more are left out of the ack. */
const MAX_WATCHED = 256;
/** SSE comment frame so proxies keep an idle stream open. */
const KEEP_ALIVE_MS = 15_000;
/** `_meta` key of the server's own events cursor, which the bridge does not serve. */
const EVENTS_META = 'mcp-terminus.dev/events';

export interface TaskListenDeps {
  readonly front: TaskFront;
  readonly pushes: TaskPushes;
}

type Message = Record<string, unknown>;

/** A listen request for tasks, checked: refused with a JSON-RPC error, or ready to stream. */
export type TaskListen =
  | { readonly kind: 'refused'; readonly id: unknown; readonly status: number; readonly error: Message }
  | {
      readonly kind: 'listen';
      readonly id: unknown;
      /** Sends the ack, then each watched task now and on each change; returns the stop. */
      readonly start: (send: (message: Message) => void) => () => void;
    };

/** Checks a `subscriptions/listen` request for task ids, or returns undefined (not one: the SDK's). */
export async function taskListen(
  message: unknown,
  owner: string,
  deps: TaskListenDeps,
): Promise<TaskListen | undefined> {
  const request = asRecord(message);
  if (request?.method !== 'subscriptions/listen') return undefined;
  const params = asRecord(request.params);
  const notifications = asRecord(params?.notifications);
  const taskIds = notifications?.taskIds;
  if (taskIds === undefined) return undefined;
  const id = request.id ?? null;
  const capabilities = asRecord(asRecord(params?._meta)?.[CLIENT_CAPABILITIES_META_KEY]);
  if (asRecord(asRecord(capabilities?.extensions)?.[TASKS_EXTENSION]) === undefined) {
    return {
      kind: 'refused',
      id,
      status: 400,
      error: {
        code: -32021,
        message: `Task notifications need the ${TASKS_EXTENSION} extension declared on the request`,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      },
    };
  }
  if (!Array.isArray(taskIds) || !taskIds.every((t) => typeof t === 'string')) {
    return {
      kind: 'refused',
      id,
      status: 400,
      error: { code: -32602, message: 'notifications.taskIds must be an array of strings' },
    };
  }
  const requested = [...new Set(taskIds)].slice(0, MAX_WATCHED);
  const watched: TaskRecord[] = [];
  for (const taskId of requested) {
    try {
      watched.push(await deps.front.get(owner, taskId));
    } catch {
      // Unknown, another caller's, malformed or past its ttl: left out of the ack, unnamed.
    }
  }
  const meta = { [SUBSCRIPTION_ID_META_KEY]: id };
  return {
    kind: 'listen',
    id,
    start: (send) => {
      send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: watched.map((t) => t.id) }, _meta: meta },
      });
      const push = (task: TaskRecord): void => {
        const detailed = withoutEventsMeta({ ...encodeDetailedTask(task) });
        const own = asRecord(detailed._meta) ?? {};
        send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...detailed, _meta: { ...own, ...meta } } });
      };
      const stops = watched.map((task) => deps.pushes.watch(task.id, push, { now: task }));
      return () => {
        for (const stop of stops) stop();
      };
    },
  };
}

/** Over HTTP: the answer to a listen request for tasks (an SSE stream), or undefined for the SDK. */
export async function answerTaskListen(
  message: unknown,
  owner: string,
  signal: AbortSignal,
  deps: TaskListenDeps,
): Promise<Response | undefined> {
  const listen = await taskListen(message, owner, deps);
  if (listen === undefined) return undefined;
  if (listen.kind === 'refused') {
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: listen.id, error: listen.error }), {
      status: listen.status,
      headers: { 'content-type': 'application/json' },
    });
  }
  const encoder = new TextEncoder();
  const cleanups: (() => void)[] = [];
  let closed = false;
  const end = (): void => {
    closed = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
  };
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => {
      const write = (frame: string): void => {
        if (!closed) controller.enqueue(encoder.encode(frame));
      };
      const close = (): void => {
        if (closed) return;
        end();
        controller.close();
      };
      if (signal.aborted) {
        close();
        return;
      }
      signal.addEventListener('abort', close, { once: true });
      cleanups.push(() => signal.removeEventListener('abort', close));
      cleanups.push(listen.start((msg) => write(`event: message\ndata: ${JSON.stringify(msg)}\n\n`)));
      const keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      keepAlive.unref();
      cleanups.push(() => clearInterval(keepAlive));
    },
    cancel: end,
  });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
  });
}

function withoutEventsMeta(answer: Record<string, unknown>): Record<string, unknown> {
  const meta = asRecord(answer._meta);
  if (meta === undefined || !(EVENTS_META in meta)) return answer;
  const { [EVENTS_META]: _dropped, ...rest } = meta;
  const { _meta: _m, ...out } = answer;
  return Object.keys(rest).length === 0 ? out : { ...out, _meta: rest };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
