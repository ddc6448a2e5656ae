import { CLIENT_CAPABILITIES_META_KEY, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import { ownerOf } from '../../owner.js';
import type { PrecheckContext, RawRpcMessage, WireDeps } from '../adapter.js';
import { TASKS_EXTENSION } from './constants.js';
import { encodeDetailedTask } from './encode.js';

/**
 * `subscriptions/listen` with `notifications.taskIds` (reference 2.7). The SDK's entry routes listen
 * requests itself and can neither refuse task notifications nor publish them (reference
 * 5.5), so this runs on the raw HTTP request first and, for task subscriptions, serves the stream:
 * - a non-declaring request gets `-32021` (HTTP 400) naming the extension;
 * - otherwise an SSE stream whose first message is the acknowledgement listing the requested ids
 *   the caller owns (others are left out silently, so the ack is no existence oracle, S8), then one
 *   `notifications/tasks` with the full `DetailedTask` per change of a watched task, and no
 *   progress or log notifications. Every message carries the subscription id.
 * Listen requests without `taskIds` go to the SDK unchanged.
 */
export function listenPrecheck(message: RawRpcMessage, context: PrecheckContext): Response | undefined {
  if (message.method !== 'subscriptions/listen') return undefined;
  const params = asRecord(message.params);
  const taskIds = asRecord(params?.notifications)?.taskIds;
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
  return streamTaskNotifications(message.id ?? null, [...new Set(taskIds)].slice(0, MAX_WATCHED), context);
}

/** Ids one stream may watch; more are left out of the ack. */
const MAX_WATCHED = 256;
/** Without events from other nodes, watched tasks are re-read this often (one read per task). */
const POLL_MS = 2000;
/** SSE comment frame so proxies keep an idle stream open (the SDK's own default). */
const KEEP_ALIVE_MS = 15_000;

function streamTaskNotifications(id: unknown, requested: readonly string[], context: PrecheckContext): Response {
  const { deps, signal } = context;
  const owner = ownerOf(context.authInfo === undefined ? {} : { http: { authInfo: context.authInfo } }, 'http');
  const meta = { [SUBSCRIPTION_ID_META_KEY]: id };
  const encoder = new TextEncoder();
  const cleanups: (() => void)[] = [];
  let closed = false;

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
      signal.addEventListener('abort', close, { once: true });
      cleanups.push(() => signal.removeEventListener('abort', close));

      const watched = (await Promise.all(requested.map((taskId) => visible(deps, owner, taskId)))).filter(
        (taskId): taskId is string => taskId !== undefined,
      );
      send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: watched }, _meta: meta },
      });
      const pusher = createPusher(deps, owner, (task) =>
        send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: { ...task._meta, ...meta } } }),
      );
      for (const taskId of watched) pusher.push(taskId);
      const watching = new Set(watched);
      cleanups.push(deps.engine.events.subscribe((event) => watching.has(event.taskId) && pusher.push(event.taskId)));
      const poll = setInterval(() => watching.forEach((taskId) => pusher.push(taskId)), POLL_MS);
      const keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      cleanups.push(
        () => clearInterval(poll),
        () => clearInterval(keepAlive),
      );
    },
    cancel: () => {
      closed = true;
      for (const cleanup of cleanups.splice(0)) cleanup();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
  });
}

async function visible(deps: WireDeps, owner: string, taskId: string): Promise<string | undefined> {
  try {
    await deps.engine.get(owner, taskId);
    return taskId;
  } catch {
    return undefined;
  }
}

/**
 * Reads and sends a task's `DetailedTask`, in order, and only when it changed since the last one
 * sent, so events and polls can both ask without duplicating notifications.
 */
function createPusher(deps: WireDeps, owner: string, send: (task: ReturnType<typeof encodeDetailedTask>) => void) {
  const last = new Map<string, string>();
  let chain = Promise.resolve();
  return {
    push(taskId: string): boolean {
      chain = chain
        .then(async () => {
          const task = encodeDetailedTask(await deps.engine.get(owner, taskId));
          const text = JSON.stringify(task);
          if (last.get(taskId) === text) return;
          last.set(taskId, text);
          send(task);
        })
        .catch(() => undefined); // expired or purged: nothing left to report
      return true;
    },
  };
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
