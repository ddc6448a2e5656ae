/**
 * The client side of a wire: what the interpreter needs from a server, whatever protocol it speaks.
 * One adapter per wire (`adapters/tasks-ext`, `adapters/rev2025-11-25`, `adapters/sep-1391`,
 * `adapters/aip-151`), each built on a `RpcChannel` (MCP wires) or an HTTP client (AIP-151), so the
 * simulation can put a faulty in-process channel under the real adapters.
 *
 * Failures are typed, never parsed from messages: every method either resolves with an answer or
 * rejects with a `WireFailure`. `lost` means "no answer": the request may or may not have had its
 * effect on the server (the case that sends a submission to SUBMISSION_UNKNOWN).
 */
import type { WireName } from '../core/task.js';
import type { SessionBinding } from './operation.js';

export type WireStatusAnswer = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface TaskSnapshot {
  readonly taskId: string;
  readonly status: WireStatusAnswer;
  readonly statusMessage?: string;
  readonly pollIntervalMs?: number;
  /** Absolute expiry (createdAt + ttl) in ms since the epoch, when the server says. */
  readonly expiresAt?: number;
  readonly progress?: { readonly done: number; readonly total?: number; readonly message?: string };
  /** Outstanding input requests by key, when `input_required`. */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
  /**
   * Where the status answer inlines the terminal outcome (the Tasks extension's `tasks/get`): that
   * outcome as `fetchResult` would decode it, so the executor can compare two reads (C13).
   */
  readonly outcome?: ResultAnswer;
}

export type SubmitAnswer =
  | ({ readonly kind: 'task' } & TaskSnapshot)
  /** The server answered synchronously: the final result, no task (a `forbidden` tool, say). */
  | { readonly kind: 'immediate'; readonly result: Record<string, unknown> }
  /**
   * MRTR (2026-07-28, SEP-2322): the server asks for input before any task exists; the call is
   * retried with `inputResponses` (and `requestState` echoed).
   */
  | {
      readonly kind: 'input_required';
      readonly inputRequests: Readonly<Record<string, unknown>>;
      readonly requestState?: string;
    };

export type KeyLookupAnswer =
  | ({ readonly kind: 'found' } & TaskSnapshot)
  | { readonly kind: 'never_created' }
  /** The server has no key lookup: SUBMISSION_UNKNOWN can only be settled by hand. */
  | { readonly kind: 'unsupported' };

export type ResultAnswer =
  | { readonly status: 'completed'; readonly result: Record<string, unknown> }
  | {
      readonly status: 'failed';
      readonly error: { readonly code: number; readonly message: string; readonly data?: unknown };
    }
  | { readonly status: 'cancelled' };

export type CancelAnswer =
  /** The server accepted the cancel; `status` is what it reported with the ack, when it did. */
  | { readonly kind: 'acked'; readonly status?: WireStatusAnswer }
  /** The task was already terminal: read it, never rewrite it to cancelled. */
  | { readonly kind: 'already_terminal'; readonly status?: WireStatusAnswer };

/** One line of a task's own log (issue 18): `seq` starts at 1 per task and never repeats. */
export interface LogLine {
  readonly seq: number;
  /** The execution epoch that wrote it: a re-run after a crash appends under the next epoch. */
  readonly epoch: number;
  /** ISO 8601, as the server wrote it. */
  readonly at: string;
  readonly stream: 'log' | 'output';
  readonly text: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** One page of a task's log (`terminus/tasks/logs`, AIP `GET /v1/operations/{id}/logs`). */
export interface LogPage {
  readonly taskId: string;
  readonly lines: readonly LogLine[];
  /** The cursor to pass as `after` next time. */
  readonly next: number;
  /** Oldest lines the server dropped for this task (its per-task bound), in total. */
  readonly dropped: number;
  readonly status: WireStatusAnswer;
  /** Terminal and nothing after `next`: a follower stops here. */
  readonly done: boolean;
}

/** A logs read: a page, or the server keeps no task logs. */
export type LogsAnswer =
  | ({ readonly kind: 'page' } & LogPage)
  /** The server keeps no task logs (`-32601` on the method, or no AIP route). */
  | { readonly kind: 'unsupported' };

/** Which lines a logs read asks for. */
export interface LogsRequest {
  /** Lines with `seq > after`; default 0 (from the start). */
  readonly after?: number;
  /** Most lines in the page; the server's default is 100, its maximum 1000. */
  readonly limit?: number;
}

/** One of a task's ordered events (issue 32), as our servers send them: `seq` 1, 2, 3, ... per task, no gap. */
export type ServerEvent = { readonly seq: number; readonly at: string } & (
  | {
      readonly kind: 'status';
      readonly status: WireStatusAnswer;
      readonly statusMessage: string | null;
      /** On `completed`: `digestOf` the result a fetch gives, to check it by (C13). */
      readonly resultDigest?: string;
    }
  | {
      readonly kind: 'progress';
      readonly progress: { readonly done: number; readonly total?: number; readonly message?: string };
    }
  | { readonly kind: 'input_requested'; readonly key: string; readonly request: Readonly<Record<string, unknown>> }
  | { readonly kind: 'input_answered'; readonly keys: readonly string[] }
  /** A log line; `line` null when the server's log bound dropped it before this read. */
  | { readonly kind: 'log'; readonly logSeq: number; readonly stream: 'log' | 'output'; readonly line: LogLine | null }
);

/** One page of a task's events (`terminus/tasks/events`, AIP `GET /v1/operations/{id}/events`). */
export interface EventPage {
  readonly taskId: string;
  readonly events: readonly ServerEvent[];
  /** Pass as `cursor` next time: it stands after the last event of this page. */
  readonly cursor: string;
  readonly lastSeq: number;
  readonly status: WireStatusAnswer;
  /** The interval the server suggests before the next read, as a status read's `pollIntervalMs`. */
  readonly pollIntervalMs?: number;
  /** Terminal and nothing after the cursor: a follower stops here. */
  readonly done: boolean;
}

/** An events read: a page, or the server keeps no ordered events. */
export type EventsAnswer = ({ readonly kind: 'page' } & EventPage) | { readonly kind: 'unsupported' };

/** Which events an events read asks for. */
export interface EventsRequest {
  /** From a previous page (or `_meta`); absent: from the first event. */
  readonly cursor?: string;
  readonly limit?: number;
}

export type WireFailureKind =
  /** No answer (timeout, connection dropped): outcome unknown. */
  | 'lost'
  /** 404 / -32602 unknown task or key. */
  | 'not_found'
  /** 429 / 503: back off, honour `retryAfterMs`. */
  | 'throttled'
  /** A definitive error answer (invalid params, capability missing, key conflict). */
  | 'rejected'
  /** The answer was malformed or truncated: retry the read, never accept it. */
  | 'malformed'
  /**
   * HTTP 401 / 403: the server refused the request's credentials and did nothing with it. Asking
   * again with the same credentials changes nothing: the caller must pass others.
   */
  | 'unauthorized';

/**
 * A wire request that got no usable answer; `kind` says what the executor may conclude (a `lost`
 * answer proves nothing, a `not_found` one is evidence). Adapters throw it, the executor branches on it.
 *
 * @example
 * ```ts
 * // In an adapter: a 429 with `Retry-After: 2` is a back-off, not an answer.
 * throw new WireFailure('throttled', 'HTTP 429 on tasks/get', { httpStatus: 429, retryAfterMs: 2000 });
 * ```
 */
export class WireFailure extends Error {
  readonly kind: WireFailureKind;
  readonly retryAfterMs: number | undefined;
  readonly rpcCode: number | undefined;
  readonly httpStatus: number | undefined;
  /**
   * The request went out without the operation's submission key (a plain `tools/call` to a tool that
   * makes no task): a key lookup cannot tell whether it ran, so a lost answer may be a call that ran (C12).
   */
  readonly unkeyed: boolean;
  /**
   * What the adapter knows that explains the failure, for the operator's evidence (a `not_found`
   * asked in a new session because the server no longer knew the task's own). Never a secret.
   */
  readonly note: string | undefined;
  /**
   * `not_found` only: the server said the task existed and its retention ended (SEP-1391's
   * `operation_expired`), where the record's own `expiresAt` cannot tell (that wire sends none).
   */
  readonly afterExpiry: boolean | undefined;

  constructor(
    kind: WireFailureKind,
    message: string,
    options: {
      retryAfterMs?: number;
      rpcCode?: number;
      httpStatus?: number;
      cause?: unknown;
      unkeyed?: boolean;
      afterExpiry?: boolean;
      note?: string;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WireFailure';
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.rpcCode = options.rpcCode;
    this.httpStatus = options.httpStatus;
    this.note = options.note;
    this.unkeyed = options.unkeyed ?? false;
    this.afterExpiry = options.afterExpiry;
  }
}

export interface SubmitRequest {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly submissionKey: string;
  readonly ttlMs?: number;
  /** MRTR retry: the answers to the pre-task input round, by the server's keys. */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** MRTR retry: the server's `requestState`, echoed as received. */
  readonly requestState?: string;
  /**
   * Called before the adapter sends the call without `submissionKey` (a tool that makes no task): the
   * adapter MUST await it and send nothing if it rejects. The executor records the fallback first, so
   * a restart while the plain call is on the wire knows its key proves nothing (C12).
   */
  readonly beforeUnkeyed?: () => Promise<void>;
}

/** One client wire adapter. Every method takes a signal; aborting it is a local stop, never a cancel (C9). */
export interface ClientWire {
  readonly wire: WireName;
  /** Adapter version, stored in the ledger with every operation it created. */
  readonly version: string;
  /**
   * True when the server offers no task wire at all: every call goes out plainly and its synchronous
   * `CallToolResult` is the receipt (C12, T-08). Absent otherwise.
   */
  readonly plainOnly?: boolean;
  submit(request: SubmitRequest, signal?: AbortSignal): Promise<SubmitAnswer>;
  lookupKey(submissionKey: string, signal?: AbortSignal): Promise<KeyLookupAnswer>;
  getStatus(taskId: string, signal?: AbortSignal): Promise<TaskSnapshot>;
  /**
   * `observed`: the terminal status the executor saw before fetching, so a wire that answers a
   * failure as an error (2025-11-25, T-40) reads it without asking the server again.
   */
  fetchResult(taskId: string, signal?: AbortSignal, observed?: WireStatusAnswer): Promise<ResultAnswer>;
  cancel(taskId: string, signal?: AbortSignal): Promise<CancelAnswer>;
  sendInput(taskId: string, responses: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<void>;
  /**
   * The transport under the wire ended by itself (a stdio server process exited): every later request
   * fails `lost`. Where the wire can tell; returns an unsubscribe. The executor then reconnects.
   */
  onClose?(listener: (reason: string) => void): () => void;
  /**
   * A page of the task's own log (issue 18). Reading it is no effect on the operation: the
   * interpreter never calls it. `not_found` like `getStatus`; `unsupported` when the server keeps none.
   */
  logs?(taskId: string, request: LogsRequest, signal?: AbortSignal): Promise<LogsAnswer>;
  /**
   * A page of the task's ordered events after `request.cursor` (issue 32). Reading is no effect on
   * the operation. `not_found` like `getStatus`; `unsupported` when the server has no such method
   * or route (a server that is not ours); a bad cursor is `rejected`.
   */
  events?(taskId: string, request: EventsRequest, signal?: AbortSignal): Promise<EventsAnswer>;
  /**
   * `sendInput` answers the keys of the server's `input_requested` events (the Tasks extension), so
   * the executor takes an input round from the events it reads. Absent: an input round is read with
   * `getStatus` (2025-11-25, whose requests arrive on a side channel under their own ids).
   */
  readonly answersEventInput?: boolean;
  /** New log lines pushed by the server, where the wire has them: only a hint to read by cursor now. */
  onLogsHint?(listener: (taskId: string) => void): () => void;
  /** Status hints pushed by the server, where the wire has them; they shorten waits, never replace a fetch. */
  onStatusHint?(listener: (taskId: string, status: WireStatusAnswer) => void): () => void;
  /**
   * Terminal outcomes the wire received without a read asking for them (the 2025-11-25 side
   * channel's blocked `tasks/result`): reports the executor keeps at once (C13); the fetch still
   * verifies the result (C2).
   */
  onTerminalHeard?(listener: (taskId: string, outcome: ResultAnswer) => void): () => void;
  /**
   * The executor waits on `taskId`: the wire may listen for pushes about it (at most one stream per
   * connection, whatever the number of tasks); the returned function stops. Absent where the wire
   * cannot listen (stdio, AIP-151, SEP-1391): polling alone then.
   */
  watchTask?(taskId: string): () => void;
  /**
   * A log follower reads `taskId`'s log: the wire may listen for its log pushes (`onLogsHint`) on
   * the connection's one stream, asking for them where the stream needs that (the Tasks extension,
   * X-67); the returned function stops. Absent where the wire has no stream.
   */
  watchLogs?(taskId: string): () => void;
  /**
   * The HTTP session this wire's connection is in (`Mcp-Session-Id`), on a sessionful wire over
   * HTTP (2025-11-25, SEP-1391); absent elsewhere. The executor keeps it with each operation the
   * wire creates, and hands it back to the connector to resume them.
   */
  session?(): SessionBinding | undefined;
  close(): Promise<void>;
}

/** One JSON-RPC exchange: real HTTP/stdio in production, a faulty in-process channel in the simulation. */
export type RpcChannel = (
  method: string,
  params: Record<string, unknown>,
  options?: { readonly signal?: AbortSignal; readonly headers?: Readonly<Record<string, string>> },
) => Promise<Record<string, unknown>>;
