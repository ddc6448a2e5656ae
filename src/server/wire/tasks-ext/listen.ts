import { CLIENT_CAPABILITIES_META_KEY, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import { ownerOf } from '../../owner.js';
import type { PrecheckContext, RawRpcMessage, WireDeps } from '../adapter.js';
import { TASKS_EXTENSION } from './constants.js';
import type { TaskEngine } from '../../../runner/engine-port.js';
import { DEFAULT_LIMITS, limitResponse, type ServerLimits } from '../../limits.js';
import { ListenHub, type ListenStream } from './listen-hub.js';
import { encodeLogLine, LISTEN_LOGS_KEY, LOGS_NOTIFICATION } from '../../task-logs.js';

/**
 * `subscriptions/listen` with `notifications.taskIds` (reference 2.7). The SDK's entry routes listen
 * requests itself and can neither refuse task notifications nor publish them (reference
 * 5.5), so this runs on the raw HTTP request first and, for task subscriptions, serves the stream:
 * - a non-declaring request gets `-32021` (HTTP 400) naming the extension;
 * - otherwise an SSE stream whose first message is the acknowledgement listing the requested ids
 *   the caller owns (others are left out silently, so the ack is no existence oracle, S8), then one
 *   `notifications/tasks` with the full `DetailedTask` per change of a watched task, and no
 *   progress or log notifications. Every message carries the subscription id.
 * - with `notifications["terminus/taskLogs"]: true` (ours, issue 18; asked for explicitly, X-67),
 *   also `notifications/terminus/tasks/logs` `{ taskId, lines }` with each line written to a
 *   watched task after the stream opened, once, in seq order; the ack echoes the key. Clients read
 *   `terminus/tasks/logs` by cursor for the lines before, and never rely on a push alone.
 * Listen requests without `taskIds` go to the SDK unchanged.
 */
export function createListenPrecheck(
  limits: Pick<ServerLimits, 'maxListenStreams' | 'maxListenStreamsPerCaller'> = DEFAULT_LIMITS,
): (message: RawRpcMessage, context: PrecheckContext) => Response | undefined {
  const hubs = new WeakMap<TaskEngine, ListenHub>();
  const hubOf = (engine: TaskEngine): ListenHub => {
    let hub = hubs.get(engine);
    if (hub === undefined) hubs.set(engine, (hub = new ListenHub(engine, limits)));
    return hub;
  };
  return (message, context) => {
    if (message.method !== 'subscriptions/listen') return undefined;
    const params = asRecord(message.params);
    const taskIds = asRecord(params?.notifications)?.taskIds;
    const withLogs = asRecord(params?.notifications)?.[LISTEN_LOGS_KEY] === true;
    if (taskIds === undefined) return undefined;
    const capabilities = asRecord(asRecord(params?._meta)?.[CLIENT_CAPABILITIES_META_KEY]);
    const declared = asRecord(capabilities?.extensions)?.[TASKS_EXTENSION];
    if (declared === undefined || declared === null || typeof declared !== 'object') {
      return rpcError(message.id, 400, {
        code: -32021,
        message: `Task notifications need the ${TASKS_EXTENSION} extension declared on the request`,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
    }
    if (!Array.isArray(taskIds) || !taskIds.every((id) => typeof id === 'string')) {
      return rpcError(message.id, 400, { code: -32602, message: 'notifications.taskIds must be an array of strings' });
    }
    const owner = ownerOf(context.authInfo === undefined ? {} : { http: { authInfo: context.authInfo } }, 'http');
    const hub = hubOf(context.deps.engine);
    const admitted = hub.admit(owner);
    if (!admitted.ok) {
      return limitResponse(message.id, 429, {
        reason: 'too_many_streams',
        message:
          admitted.scope === 'caller'
            ? `Too many open task streams for this caller (limit ${admitted.limit}, --max-listen-streams-per-caller); close one and listen again`
            : `Too many open task streams on this server (limit ${admitted.limit}, --max-listen-streams); close one and listen again`,
        limit: admitted.limit,
        retryAfterMs: STREAM_RETRY_MS,
      });
    }
    return streamTaskNotifications(message.id ?? null, [...new Set(taskIds)].slice(0, MAX_WATCHED), {
      ...context,
      owner,
      hub,
      withLogs,
    });
  };
}

/** The precheck with the default limits. */
export const listenPrecheck = createListenPrecheck();

/** Ids one stream may watch; more are left out of the ack. */
const MAX_WATCHED = 256;
/** SSE comment frame so proxies keep an idle stream open (the SDK's own default). */
const KEEP_ALIVE_MS = 15_000;
/** A refused stream may try again after this long (streams end when their client leaves). */
const STREAM_RETRY_MS = 5_000;

function streamTaskNotifications(
  id: unknown,
  requested: readonly string[],
  context: PrecheckContext & { readonly owner: string; readonly hub: ListenHub; readonly withLogs: boolean },
): Response {
  const { deps, signal, owner, hub, withLogs } = context;
  const meta = { [SUBSCRIPTION_ID_META_KEY]: id };
  const encoder = new TextEncoder();
  const cleanups: (() => void)[] = [];
  let closed = false;
  // Given back exactly once, whichever way the stream ends (client gone, server closing, error).
  let left = false;
  const last = new Map<string, string>();
  let deliver: ListenStream['deliver'] = () => undefined;
  let followLogs: (taskId: string) => void = () => undefined;
  const subscriber: ListenStream = {
    owner,
    deliver: (taskId, task) => deliver(taskId, task),
    ...(withLogs ? { logs: (taskId: string) => followLogs(taskId) } : {}),
  };
  const leave = (): void => {
    if (left) return;
    left = true;
    hub.leave(subscriber);
  };

  const stream = new ReadableStream<Uint8Array>({
    start: async (controller) => {
      const write = (frame: string): void => {
        if (!closed) controller.enqueue(encoder.encode(frame));
      };
      const send = (msg: unknown): void => write(`event: message\ndata: ${JSON.stringify(msg)}\n\n`);
      const close = (): void => {
        if (closed) return;
        closed = true;
        for (const cleanup of cleanups.splice(0)) cleanup();
        controller.close();
      };
      cleanups.push(leave);
      signal.addEventListener('abort', close, { once: true });
      cleanups.push(() => signal.removeEventListener('abort', close));

      const watched = (await Promise.all(requested.map((taskId) => visible(deps, owner, taskId)))).filter(
        (taskId): taskId is string => taskId !== undefined,
      );
      // Each watched task's log is followed from its last seq now: lines before are read by cursor.
      const cursors = new Map<string, { after: number; chain: Promise<void> }>();
      if (withLogs) {
        for (const taskId of watched)
          cursors.set(taskId, { after: await lastSeq(deps, owner, taskId), chain: Promise.resolve() });
      }
      if (closed) return;
      send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: watched, ...(withLogs ? { [LISTEN_LOGS_KEY]: true } : {}) }, _meta: meta },
      });
      followLogs = (taskId) => {
        const cursor = cursors.get(taskId);
        if (cursor === undefined) return;
        cursor.chain = cursor.chain
          .then(async () => {
            for (;;) {
              if (closed) return;
              const page = await deps.engine.readLog(owner, taskId, { after: cursor.after, limit: LOG_PUSH_LINES });
              if (page.lines.length === 0) return;
              cursor.after = page.next;
              send({
                jsonrpc: '2.0',
                method: LOGS_NOTIFICATION,
                params: { taskId, lines: page.lines.map(encodeLogLine), _meta: meta },
              });
              if (page.lines.length < LOG_PUSH_LINES) return;
            }
          })
          .catch(() => undefined); // expired or purged: nothing left to push
      };
      // Sent in order, and only when changed since the last one this stream sent.
      deliver = (taskId, task) => {
        const text = JSON.stringify(task);
        if (last.get(taskId) === text) return;
        last.set(taskId, text);
        send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: { ...task._meta, ...meta } } });
      };
      hub.watch(subscriber, watched);
      const keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      cleanups.push(() => clearInterval(keepAlive));
    },
    cancel: () => {
      closed = true;
      for (const cleanup of cleanups.splice(0)) cleanup();
      leave();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
  });
}

/** Lines per log push: one read's worth. */
const LOG_PUSH_LINES = 1000;

async function lastSeq(deps: WireDeps, owner: string, taskId: string): Promise<number> {
  try {
    return (await deps.engine.readLog(owner, taskId, { after: Number.MAX_SAFE_INTEGER, limit: 1 })).lastSeq;
  } catch {
    return 0;
  }
}

async function visible(deps: WireDeps, owner: string, taskId: string): Promise<string | undefined> {
  try {
    await deps.engine.get(owner, taskId);
    return taskId;
  } catch {
    return undefined;
  }
}

function rpcError(id: unknown, status: number, error: { code: number; message: string; data?: unknown }): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
