import { TerminusError } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import { logLineBytes, MAX_LOG_TEXT_BYTES, type LogBound, type LogStream, type NewLogLine } from '../core/log.js';
import type { Fence, TaskStore } from '../store/port.js';
import { Batcher } from './batcher.js';

/** The per-task log bound plus the per-line limit, as the engine resolved them. */
export interface LogLimits extends LogBound {
  /** Text longer than this many UTF-8 bytes is truncated and marked; fields' JSON may not exceed it. */
  readonly maxLineBytes: number;
}

/**
 * Checks what a handler passed to `ctx.log` / `ctx.output` and makes the line the store takes:
 * `invalid_argument` (naming the call and what to do) for a non-string text, a text over 1 MiB,
 * fields that are not a plain JSON object or whose JSON exceeds `maxLineBytes`; a text over
 * `maxLineBytes` is cut at a character boundary and marked `… [truncated: N bytes in all]`.
 */
export function prepareLine(
  stream: LogStream,
  text: unknown,
  fields: unknown,
  limits: Pick<LogLimits, 'maxLineBytes'>,
): NewLogLine {
  const call = stream === 'log' ? 'ctx.log(text, fields?)' : 'ctx.output(text)';
  if (typeof text !== 'string') {
    throw invalid(`${call} takes a string text, got ${describe(text)}`);
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_LOG_TEXT_BYTES) {
    throw invalid(`${call}: text of ${bytes} bytes is over the 1 MiB a line may have; log a summary, not a file`);
  }
  const line: NewLogLine = {
    stream,
    text: bytes > limits.maxLineBytes ? truncate(text, bytes, limits.maxLineBytes) : text,
  };
  if (fields === undefined) return line;
  if (
    !isRecord(fields) ||
    (Object.getPrototypeOf(fields) !== Object.prototype && Object.getPrototypeOf(fields) !== null)
  ) {
    throw invalid(`${call}: fields must be a plain object, got ${describe(fields)}`);
  }
  checkJson(fields, 'fields', call, new Set());
  const fieldBytes = Buffer.byteLength(JSON.stringify(fields));
  if (fieldBytes > limits.maxLineBytes) {
    throw invalid(`${call}: fields are ${fieldBytes} bytes of JSON, over the ${limits.maxLineBytes} a line may have`);
  }
  return { ...line, fields };
}

function truncate(text: string, bytes: number, max: number): string {
  const marker = `… [truncated: ${bytes} bytes in all]`;
  const buffer = Buffer.from(text, 'utf8');
  let cut = Math.max(0, max - Buffer.byteLength(marker));
  // Back up to the first byte of a UTF-8 sequence, so no character is split into U+FFFD.
  while (cut > 0 && ((buffer[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return buffer.subarray(0, cut).toString('utf8') + marker;
}

/** JSON values only: what would not survive a JSON round trip unchanged is refused, with its path. */
function checkJson(value: unknown, path: string, call: string, seen: Set<unknown>): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return;
    throw invalid(`${call}: ${path} is ${value}, which JSON cannot hold`);
  }
  if (typeof value !== 'object') {
    const what = value === undefined ? 'undefined' : `a ${typeof value}`;
    throw invalid(`${call}: ${path} is ${what}, which JSON cannot hold`);
  }
  if (seen.has(value)) throw invalid(`${call}: ${path} refers back to itself (a cycle)`);
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkJson(item, `${path}[${i}]`, call, seen));
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw invalid(`${call}: ${path} is ${describe(value)}; pass plain objects, arrays, strings, numbers, booleans`);
    }
    for (const [key, item] of Object.entries(value)) checkJson(item, `${path}.${key}`, call, seen);
  }
  seen.delete(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object';
  }
  return typeof value;
}

function invalid(message: string): TerminusError {
  return new TerminusError('invalid_argument', message, { details: { field: 'log' } });
}

/**
 * Lines one store write takes at most: a flood's bound-full batch (10,000 lines by default) goes as
 * several short writes, so other writes of the node (a SQLite group commit takes every queued
 * write of its turn) wait one chunk, not the whole batch. About 2 ms a chunk on SQLite here.
 */
export const LOG_APPEND_CHUNK = 500;

/**
 * One run's log writer. Lines written while an append is in flight wait in one batch and go
 * together in the next (a `Batcher`): a handler logging in a tight loop costs one store write per
 * commit, not per line, and lines keep the order of the calls. The waiting batch holds at most the
 * task's bound (`maxLines`, `maxBytes`): a line dropped there is one the store would have dropped
 * anyway once the newer ones were in, so past it the oldest waiting lines are dropped, and counted
 * into the task's `dropped` and its seq numbers (the store's `skipped`). A call's promise settles
 * when its batch was stored; ignored, it never counts as an unhandled rejection.
 */
export class TaskLogWriter {
  readonly #store: TaskStore;
  readonly #fence: Fence;
  readonly #limits: LogLimits;
  readonly #fenced: <T>(write: (now: number) => Promise<T>) => Promise<T>;
  readonly #appended: () => void;
  readonly #dropped: (count: number) => void;
  readonly #batcher: Batcher<NewLogLine>;

  constructor(deps: {
    readonly store: TaskStore;
    readonly fence: Fence;
    readonly limits: LogLimits;
    /** Runs a fenced write (a `lease_lost` aborts the run). */
    readonly fenced: <T>(write: (now: number) => Promise<T>) => Promise<T>;
    /** After each committed append (publishes the `log` event). */
    readonly appended: () => void;
    /** Lines were dropped before they reached the store (written faster than it took them). */
    readonly dropped: (count: number) => void;
  }) {
    this.#store = deps.store;
    this.#fence = deps.fence;
    this.#limits = deps.limits;
    this.#fenced = deps.fenced;
    this.#appended = deps.appended;
    this.#dropped = deps.dropped;
    const bound = { maxItems: deps.limits.maxLines, maxBytes: deps.limits.maxBytes };
    this.#batcher = new Batcher(bound, logLineBytes, (lines, skipped) => this.#append(lines, skipped));
  }

  /** Rejects at once (nothing written) for bad input; else settles once the line's batch is stored. */
  write(stream: LogStream, text: unknown, fields?: unknown): Promise<void> {
    let line: NewLogLine;
    try {
      line = prepareLine(stream, text, fields, this.#limits);
    } catch (error) {
      return handled(Promise.reject(error as Error));
    }
    return this.#batcher.push([line]);
  }

  /**
   * Lines already checked and cut (by a worker process's own writer), after `skipped` lines it
   * dropped on its side: one batch of a worker's log.
   */
  writePrepared(lines: readonly NewLogLine[], skipped: number): Promise<void> {
    return this.#batcher.push(lines, skipped);
  }

  /** Resolves once every line written so far is stored or dropped: the run's outcome goes after. */
  drain(): Promise<void> {
    return this.#batcher.drain();
  }

  async #append(lines: readonly NewLogLine[], skipped: number): Promise<void> {
    if (skipped > 0) this.#dropped(skipped);
    for (let at = 0; at < lines.length || (at === 0 && skipped > 0); at += LOG_APPEND_CHUNK) {
      const chunk = lines.slice(at, at + LOG_APPEND_CHUNK);
      const gap = at === 0 ? skipped : 0;
      await this.#fenced((now) => this.#store.appendLog(this.#fence, chunk, this.#limits, now, gap));
      this.#appended();
    }
  }
}

/** `promise`, marked handled: a caller that ignores it does not make an unhandled rejection. */
export function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
