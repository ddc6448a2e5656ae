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
  | 'malformed';

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

  constructor(
    kind: WireFailureKind,
    message: string,
    options: { retryAfterMs?: number; rpcCode?: number; httpStatus?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WireFailure';
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.rpcCode = options.rpcCode;
    this.httpStatus = options.httpStatus;
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
  fetchResult(taskId: string, signal?: AbortSignal): Promise<ResultAnswer>;
  cancel(taskId: string, signal?: AbortSignal): Promise<CancelAnswer>;
  sendInput(taskId: string, responses: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<void>;
  /**
   * The transport under the wire ended by itself (a stdio server process exited): every later request
   * fails `lost`. Where the wire can tell; returns an unsubscribe. The executor then reconnects.
   */
  onClose?(listener: (reason: string) => void): () => void;
  /** Status hints pushed by the server, where the wire has them; they shorten waits, never replace a fetch. */
  onStatusHint?(listener: (taskId: string, status: WireStatusAnswer) => void): () => void;
  close(): Promise<void>;
}

/** One JSON-RPC exchange: real HTTP/stdio in production, a faulty in-process channel in the simulation. */
export type RpcChannel = (
  method: string,
  params: Record<string, unknown>,
  options?: { readonly signal?: AbortSignal; readonly headers?: Readonly<Record<string, string>> },
) => Promise<Record<string, unknown>>;
