/**
 * Client adapter for the experimental tasks of MCP 2025-11-25 over any `RpcChannel` in the legacy
 * era (after `initialize`): task-augmented `tools/call` (`params.task`), `tasks/get`, `tasks/result`,
 * `tasks/cancel`.
 *
 * Built on the raw channel rather than the SDK v2 `Client`: the same `RpcChannel` then carries both
 * MCP wires (the simulation injects faults under either), and the adapter sees what the typed
 * client hides: HTTP 429/503 with Retry-After (C6) and the `-32602` of `tasks/cancel` on a terminal
 * task, which must be read as "already terminal", never as a transport error.
 *
 * `-32602` is ambiguous on this wire (unknown task, terminal task on cancel, or the tool's own
 * invalid-params error on `tasks/result`). It is settled by `data.reason` when the server gives one
 * (ours does), else by one `tasks/get` of the same id: "not found" there is `not_found`, a task there
 * means the error was about the call. Messages are never parsed.
 *
 * No key lookup exists on this wire: `lookupKey` tries ours and answers `unsupported` on `-32601`;
 * `logs` likewise tries our `terminus/tasks/logs` (issue 18), and its pushed notification is a hint.
 *
 * Input rounds (reference 1.11) go through the side channel (`side-channel.ts`) when the connection
 * can carry server requests: a poll that sees `input_required` keeps a `tasks/result` open, and
 * reports the task-tagged requests that arrived on it as `inputRequests` (keyed by their JSON-RPC
 * id); `sendInput` answers them. Without a request hook, `sendInput` rejects as before.
 */
import type {
  CancelAnswer,
  ClientWire,
  ResultAnswer,
  RpcChannel,
  TaskSnapshot,
  WireStatusAnswer,
} from '../../wire-port.js';
import { isTerminal } from '../../../core/task.js';
import type { SessionBinding } from '../../operation.js';
import { WireFailure } from '../../wire-port.js';
import { requestHookOf, type NotificationListener, type ServerRequestHook } from '../connection.js';
import { LOOKUP_METHOD, SUBMISSION_KEY_META } from '../envelope.js';
import { rpcEvents } from '../events.js';
import { LOGS_NOTIFICATION, rpcLogs } from '../logs.js';
import { isRpcError, RPC_CODES, unkeyed, type RpcErrorFailure } from '../rpc-error.js';
import { decodeLookup } from '../tasks-ext/codec.js';
import { decodeSnapshot, isWireStatus, LEGACY_FIELDS } from '../snapshot.js';
import { decodeCreate, decodeResult, decodeResultError, decodeStatus } from './codec.js';
import { SideChannel } from './side-channel.js';
import type { TaskListener } from '../task-listener.js';

export const REV_2025_ADAPTER_VERSION = 'rev2025-11-25-client/1';

export interface Rev20251125WireOptions {
  readonly channel: RpcChannel;
  /** Requested task TTL (ms) when the submit names none; default: the server's choice. */
  readonly defaultTtlMs?: number;
  /** Where `notifications/tasks/status` arrive (stdio, sessionful HTTP); hints only. */
  readonly onNotification?: (listener: NotificationListener) => () => void;
  /** Where server requests arrive (input rounds); default: the hook of the connection `channel` belongs to. */
  readonly onRequest?: ServerRequestHook;
  readonly close?: () => Promise<void>;
  /**
   * The session's GET stream (sessionful HTTP), opened while a task is watched; absent: none.
   * `connectServer` sets it up for the connection it opens.
   * @internal
   */
  readonly listener?: TaskListener;
  /**
   * T-08: whether the server advertised `tasks.requests.tools.call`. False: every `tools/call` is
   * sent plainly (no `params.task`) and its `CallToolResult` is the answer (C12). Default true.
   */
  readonly taskCalls?: boolean;
  /**
   * T-09: `execution.taskSupport` by tool name, from `tools/list`. When given, a tool whose support
   * is absent (not listed, or listed without it) or `forbidden` is called plainly. Default: not
   * consulted (every call offers a task, as before the list was read).
   */
  readonly taskSupport?: ReadonlyMap<string, string>;
  /** The HTTP session the connection is in (`ClientWire.session`); absent: none (stdio). */
  readonly session?: () => SessionBinding | undefined;
  /**
   * Why a task may be unknown here though it exists: the connection was to continue an operation's
   * session and the server no longer knew it. Added to every `not_found` as `WireFailure.note`.
   */
  readonly sessionNote?: string;
}

/** The wire status our server's `-32602` names in `data.status` (T-62), if any. */
function statusIn(error: RpcErrorFailure): WireStatusAnswer | undefined {
  const data = error.rpcData;
  const status = typeof data === 'object' && data !== null ? (data as { status?: unknown }).status : undefined;
  return isWireStatus(status) ? status : undefined;
}

/** T-08, T-09, T-11, T-12: offer a task only where the server and the tool take one. */
function offersTask(options: Rev20251125WireOptions, tool: string): boolean {
  if (options.taskCalls === false) return false;
  if (options.taskSupport === undefined) return true;
  const support = options.taskSupport.get(tool);
  return support === 'optional' || support === 'required';
}

/**
 * The 2025-11-25 task wire (`params.task` on `tools/call`, `tasks/get`, `tasks/result`,
 * `tasks/cancel`) on a connection that already ran a legacy `initialize`; `negotiate` makes it.
 *
 * @example
 * ```ts
 * const wire = createRev20251125Wire({
 *   channel: connection.request,
 *   onNotification: (listener) => connection.onNotification(listener),
 *   close: () => connection.close(),
 * });
 * ```
 */
export function createRev20251125Wire(options: Rev20251125WireOptions): ClientWire {
  const { channel } = options;
  const onRequest = options.onRequest ?? requestHookOf(channel);
  const heard = new Set<(taskId: string, outcome: ResultAnswer) => void>();
  const side =
    onRequest === undefined
      ? undefined
      : new SideChannel(channel, (taskId) => {
          const outcome = held(taskId);
          if (outcome !== undefined) for (const listener of [...heard]) listener(taskId, outcome);
        });
  const unhook = side === undefined ? undefined : onRequest?.(side.accept);

  const notFound = (error: RpcErrorFailure): WireFailure =>
    new WireFailure('not_found', error.message, {
      rpcCode: error.rpcCode,
      cause: error,
      ...(options.sessionNote === undefined ? {} : { note: options.sessionNote }),
    });

  /** The outcome the side channel's blocked `tasks/result` received, if it came and decodes. */
  function held(taskId: string): ResultAnswer | undefined {
    const final = side?.final(taskId);
    if (final === undefined) return undefined;
    try {
      return decodeResult(final);
    } catch {
      return undefined;
    }
  }

  /**
   * A status read or a cancel, unless the side channel already holds the task's final answer: that
   * was the task's first terminal report, and a terminal status is final (T-23), so the server is
   * not asked. An answer that came while the final one arrived yields to it (a `working` sent before
   * the task ended is only late, a failure is nothing), unless it names another terminal status: no
   * honest server reports two, so that answer is passed on and the executor, told of the final one
   * first (`onTerminalHeard`), records the contradiction (C13). Gate seeds 1151 and 1892 on this
   * wire: a peer that rewrote a completed task to `cancelled` once it was cancelled was followed.
   * The fetch still verifies the held answer (C2).
   */
  async function unlessHeld<T extends { readonly status?: WireStatusAnswer }>(
    taskId: string,
    fromHeld: (outcome: ResultAnswer) => T,
    ask: () => Promise<T>,
  ) {
    const before = held(taskId);
    if (before !== undefined) return fromHeld(before);
    let answer: T;
    try {
      answer = await ask();
    } catch (error) {
      const came = held(taskId);
      if (came === undefined) throw error;
      return fromHeld(came);
    }
    const came = held(taskId);
    if (came === undefined) return answer;
    const contradicts = answer.status !== undefined && isTerminal(answer.status) && answer.status !== came.status;
    return contradicts ? answer : fromHeld(came);
  }

  async function readStatus(taskId: string, signal?: AbortSignal): Promise<TaskSnapshot> {
    try {
      const snapshot = decodeStatus(await channel('tasks/get', { taskId }, { signal }), taskId);
      if (side === undefined || snapshot.status !== 'input_required') return snapshot;
      // T-52: the requests arrive on a tasks/result call; the ones already here are reported now,
      // later ones with a later poll.
      side.open(taskId, signal);
      const inputRequests = side.requests(taskId);
      return inputRequests === undefined ? snapshot : { ...snapshot, inputRequests };
    } catch (error) {
      if (isRpcError(error, RPC_CODES.invalidParams)) throw notFound(error);
      throw error;
    }
  }

  async function sendCancel(taskId: string, signal?: AbortSignal): Promise<CancelAnswer> {
    try {
      const answer = await channel('tasks/cancel', { taskId }, { signal });
      const status = answer.status;
      // T-64: the answer is the task after the cancel, so it proves the outcome.
      return isWireStatus(status) ? { kind: 'acked', status } : { kind: 'acked' };
    } catch (error) {
      if (!isRpcError(error, RPC_CODES.invalidParams)) throw error;
      if (error.reason === 'task_not_found') throw notFound(error);
      // T-62: -32602 on a terminal task. Our server names its status (`data.status`): taken as is,
      // so no extra read goes out beside the executor's back-off (a Retry-After may be running).
      // Another server's is read once. Never rewritten to cancelled.
      const named = error.reason === 'already_terminal' ? statusIn(error) : undefined;
      if (named !== undefined) return { kind: 'already_terminal', status: named };
      const status = await exists(taskId, signal);
      if (status === null) throw notFound(error);
      return { kind: 'already_terminal', status };
    }
  }

  /** Whether `taskId` resolves: the tie-breaker for an ambiguous `-32602`. */
  async function exists(taskId: string, signal?: AbortSignal): Promise<WireStatusAnswer | null> {
    try {
      return decodeStatus(await channel('tasks/get', { taskId }, { signal }), taskId).status;
    } catch (error) {
      if (isRpcError(error, RPC_CODES.invalidParams)) return null;
      throw error;
    }
  }

  return {
    wire: 'mcp-2025-11-25',
    version: REV_2025_ADAPTER_VERSION,
    ...(options.taskCalls === false ? { plainOnly: true } : {}),
    ...(options.session === undefined ? {} : { session: options.session }),

    async submit(request, signal) {
      const ttl = request.ttlMs ?? options.defaultTtlMs;
      if (!offersTask(options, request.tool)) {
        // T-08, T-09: a plain call makes no task, so no key lookup can find it: the executor records
        // that before it leaves, and a lost answer is a call that may have run (C12), never looked up.
        await request.beforeUnkeyed?.();
        try {
          return decodeCreate(await channel('tools/call', { name: request.tool, arguments: request.args }, { signal }));
        } catch (failure) {
          throw unkeyed(failure);
        }
      }
      const params = {
        name: request.tool,
        arguments: request.args,
        task: ttl === undefined ? {} : { ttl },
        // Ignored by servers that do not know it; kept so a lookup-capable server can deduplicate.
        _meta: { [SUBMISSION_KEY_META]: request.submissionKey },
      };
      return decodeCreate(await channel('tools/call', params, { signal }));
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
      unlessHeld(
        taskId,
        (outcome): TaskSnapshot => ({ taskId, status: outcome.status, outcome }),
        () => readStatus(taskId, signal),
      ),

    async fetchResult(taskId, signal, observed) {
      // The answer the side channel's blocked call received, if any, is decoded like a fetched one.
      const kept = side?.takeFinal(taskId);
      try {
        return decodeResult(kept ?? (await channel('tasks/result', { taskId }, { signal })));
      } catch (error) {
        if (!isRpcError(error)) throw error;
        if (error.rpcCode === RPC_CODES.invalidParams) {
          if (error.reason === 'task_not_found') throw notFound(error);
          if (error.reason === undefined && (await exists(taskId, signal)) === null) throw notFound(error);
        }
        // A cancelled task has no payload; servers answer it with an error (ours: -32602 with
        // `task_cancelled`, taken as is; SDK 1.32: -32603, settled by one read).
        if (error.reason === 'task_cancelled' && statusIn(error) === 'cancelled') return { status: 'cancelled' };
        // The executor saw the task failed: the error is its outcome (T-40), and no read goes out to
        // settle it beside a Retry-After another read may have heard (gate seed 6438: 15 ms into one).
        if (observed === 'failed') return decodeResultError(error);
        const now = await exists(taskId, signal);
        if (now === 'cancelled') return { status: 'cancelled' };
        if (now === null) throw notFound(error);
        return decodeResultError(error);
      }
    },

    cancel: (taskId, signal) =>
      unlessHeld(
        taskId,
        (outcome): CancelAnswer => ({ kind: 'already_terminal', status: outcome.status }),
        () => sendCancel(taskId, signal),
      ),

    async sendInput(taskId, responses) {
      if (side === undefined) {
        throw new WireFailure('rejected', 'this connection cannot carry server requests (no input rounds)');
      }
      await side.answer(taskId, responses);
    },

    logs: (taskId, request, signal) => rpcLogs(channel, taskId, request, signal),
    events: (taskId, request, signal) => rpcEvents(channel, taskId, request, signal),

    ...(side === undefined
      ? {}
      : {
          onTerminalHeard(listener: (taskId: string, outcome: ResultAnswer) => void) {
            heard.add(listener);
            return () => heard.delete(listener);
          },
        }),

    ...(options.onNotification === undefined
      ? {}
      : {
          onStatusHint(listener: (taskId: string, status: WireStatusAnswer) => void) {
            return options.onNotification!((method, params) => {
              if (method !== 'notifications/tasks/status') return;
              try {
                const task = decodeSnapshot(params, LEGACY_FIELDS);
                listener(task.taskId, task.status);
              } catch {
                // A malformed hint is only a hint: the next poll reads the truth.
              }
            });
          },
          onLogsHint(listener: (taskId: string) => void) {
            return options.onNotification!((method, params) => {
              if (method === LOGS_NOTIFICATION && typeof params.taskId === 'string') listener(params.taskId);
            });
          },
        }),

    ...(options.listener === undefined
      ? {}
      : {
          watchTask: (taskId: string) => options.listener!.watch(taskId),
          // The session's GET stream carries every task's log pushes unasked.
          watchLogs: (taskId: string) => options.listener!.watch(taskId, { logs: true }),
        }),

    close: async () => {
      options.listener?.close();
      unhook?.();
      side?.close();
      await options.close?.();
    },
  };
}
