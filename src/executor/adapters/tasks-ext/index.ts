/**
 * Client adapter for the MCP Tasks extension (2026-07-28, SEP-2663) over any `RpcChannel`: a
 * `tools/call` carrying our submission key in `_meta`, `tasks/get` (status and, once terminal, the
 * inlined result), `tasks/update` for input, `tasks/cancel` (an empty, eventually consistent ack),
 * and our `terminus/tasks/lookup` for keys (`-32601` from a server without it: `unsupported`), and
 * our `terminus/tasks/logs` for a task's own log (`-32601`: the server keeps none), whose pushes a
 * log follower asks for on the listen stream (`watchLogs`).
 */
import { paramHeadersFor, type ParamHeader } from '../../../core/param-headers.js';
import type { ClientWire, RpcChannel, WireStatusAnswer } from '../../wire-port.js';
import { WireFailure } from '../../wire-port.js';
import type { NotificationListener } from '../connection.js';
import { LOOKUP_METHOD, SUBMISSION_KEY_META } from '../envelope.js';
import { decodeSnapshot, MODERN_FIELDS } from '../snapshot.js';
import type { TaskListener } from '../task-listener.js';
import { rpcEvents } from '../events.js';
import { LOGS_NOTIFICATION, rpcLogs } from '../logs.js';
import { isRpcError, RPC_CODES, unkeyed } from '../rpc-error.js';
import { decodeCreate, decodeLookup, decodeOutcome, decodeStatus } from './codec.js';

export const TASKS_EXT_ADAPTER_VERSION = 'tasks-ext-client/1';

/** `data.reason` of our server's `-32602` for a submission key sent to a tool that never makes a task. */
const KEY_NEEDS_TASK = 'submission_key_needs_task';

/** SEP-2243 HeaderMismatch: the request's headers and body disagree; refused before anything ran. */
const HEADER_MISMATCH = -32020;

export interface TasksExtWireOptions {
  readonly channel: RpcChannel;
  /** Closes what the channel holds (the connection); default nothing. */
  readonly close?: () => Promise<void>;
  /** Where pushed notifications arrive: `notifications/tasks` become status hints. */
  readonly onNotification?: (listener: NotificationListener) => () => void;
  /**
   * The connection's `subscriptions/listen` stream (HTTP); absent: no listening, polling only.
   * `connectServer` sets it up for the connection it opens.
   * @internal
   */
  readonly listener?: TaskListener;
  /**
   * The `x-mcp-header` arguments of a tool (SEP-2243), read from the server's `tools/list`. Asked
   * only when a call is refused `-32020` (HeaderMismatch: nothing ran), which is then sent once more
   * with its `Mcp-Param-*` headers; absent: such a refusal stands.
   */
  readonly paramHeaders?: (tool: string, signal?: AbortSignal) => Promise<readonly ParamHeader[]>;
}

/** `notifications/tasks` (reference 2.7): a full `DetailedTask`; other methods (logs, say) are not status. */
export function taskNotification(
  method: string,
  params: Record<string, unknown>,
): { taskId: string; status: WireStatusAnswer } | null {
  if (method !== 'notifications/tasks') return null;
  try {
    const { taskId, status } = decodeSnapshot(params, MODERN_FIELDS);
    return { taskId, status };
  } catch {
    // A malformed push is only a lost hint: the next poll reads the truth.
    return null;
  }
}

/** `-32602` on a task method: the id is unknown, expired or foreign (one answer for all, S8). */
async function onTask<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isRpcError(error, RPC_CODES.invalidParams)) {
      throw new WireFailure('not_found', error.message, { rpcCode: error.rpcCode, cause: error });
    }
    throw error;
  }
}

/** @example const wire = createTasksExtWire({ channel: connection.request }); */
export function createTasksExtWire(options: TasksExtWireOptions): ClientWire {
  const { channel } = options;

  /**
   * Sends a `tools/call`; a `-32020` refusal (nothing ran) is sent once more with the tool's
   * `Mcp-Param-*` headers, when it declares any.
   */
  const withParamHeaders =
    (tool: string, args: Record<string, unknown>, signal?: AbortSignal) =>
    async (send: (options: { headers?: Record<string, string> }) => Promise<Record<string, unknown>>) => {
      try {
        return await send({});
      } catch (error) {
        if (!isRpcError(error, HEADER_MISMATCH) || options.paramHeaders === undefined) throw error;
        const headers = paramHeadersFor(await options.paramHeaders(tool, signal), args);
        if (Object.keys(headers).length === 0) throw error;
        return send({ headers });
      }
    };
  return {
    wire: 'mcp-tasks-ext',
    version: TASKS_EXT_ADAPTER_VERSION,

    async submit(request, signal) {
      const params = {
        name: request.tool,
        arguments: request.args,
        ...(request.inputResponses === undefined ? {} : { inputResponses: request.inputResponses }),
        ...(request.requestState === undefined ? {} : { requestState: request.requestState }),
        _meta: { [SUBMISSION_KEY_META]: request.submissionKey },
      };
      const headers = withParamHeaders(request.tool, request.args, signal);
      try {
        return decodeCreate(await headers((h) => channel('tools/call', params, { signal, ...h })));
      } catch (error) {
        // Our server refuses a key for a tool that never runs as a task (its `forbidden` tools): the
        // refusal proves nothing ran, and the tool is then called plainly, its answer the result (C12).
        if (!isRpcError(error, RPC_CODES.invalidParams) || error.reason !== KEY_NEEDS_TASK) throw error;
        const { _meta: _key, ...plain } = params;
        await request.beforeUnkeyed?.();
        try {
          return decodeCreate(await headers((h) => channel('tools/call', plain, { signal, ...h })));
        } catch (failure) {
          throw unkeyed(failure);
        }
      }
    },

    async lookupKey(submissionKey, signal) {
      try {
        return decodeLookup(await channel(LOOKUP_METHOD, { submissionKey }, { signal }));
      } catch (error) {
        if (isRpcError(error, RPC_CODES.methodNotFound)) return { kind: 'unsupported' };
        throw error;
      }
    },

    getStatus: (taskId, signal) =>
      onTask(async () => decodeStatus(await channel('tasks/get', { taskId }, { signal }), taskId)),

    fetchResult: (taskId, signal) =>
      onTask(async () => decodeOutcome(await channel('tasks/get', { taskId }, { signal }), taskId)),

    cancel: (taskId, signal) =>
      onTask(async () => {
        await channel('tasks/cancel', { taskId }, { signal });
        // The ack proves nothing about the outcome (reference 2.6): keep polling.
        return { kind: 'acked' };
      }),

    sendInput: (taskId, responses, signal) =>
      onTask(async () => {
        await channel('tasks/update', { taskId, inputResponses: { ...responses } }, { signal });
      }),

    ...(options.onNotification === undefined
      ? {}
      : {
          onStatusHint: (listener: (taskId: string, status: WireStatusAnswer) => void) =>
            options.onNotification!((method, params) => {
              const pushed = taskNotification(method, params);
              if (pushed !== null) listener(pushed.taskId, pushed.status);
            }),
          // Our log push on a listen stream that asked for it (`watchLogs`): a hint to read by cursor.
          onLogsHint: (listener: (taskId: string) => void) =>
            options.onNotification!((method, params) => {
              if (method === LOGS_NOTIFICATION && typeof params.taskId === 'string') listener(params.taskId);
            }),
        }),

    ...(options.listener === undefined
      ? {}
      : {
          watchTask: (taskId: string) => options.listener!.watch(taskId),
          watchLogs: (taskId: string) => options.listener!.watch(taskId, { logs: true }),
        }),
    logs: (taskId, request, signal) => rpcLogs(channel, taskId, request, signal),
    events: (taskId, request, signal) => rpcEvents(channel, taskId, request, signal),
    // `tasks/update` answers the server's own input keys, the keys its `input_requested` events name.
    answersEventInput: true,

    close: async () => {
      options.listener?.close();
      await options.close?.();
    },
  };
}
