/**
 * A task's ordered events (issue 32): every status change, progress report, input round and log
 * line of one task, numbered 1, 2, 3, ... per task with no gap, each number assigned in the same
 * commit as the change it records. A reader that holds the seq of the last event it saw reads on
 * from there after a broken stream and gets every later event exactly once, in order.
 *
 * Not the wake-ups of `store/events.ts` (lossy, in-process or LISTEN/NOTIFY): these are durable
 * rows, kept as long as their task.
 */
import { TerminusError } from './errors.js';
import type { LogLine, LogStream } from './log.js';
import type { InputRequest, Progress, TaskStatus } from './task.js';

/** What an event records. */
export const ORDERED_EVENT_KINDS = ['status', 'progress', 'input_requested', 'input_answered', 'log'] as const;
/** One of `ORDERED_EVENT_KINDS`. */
export type OrderedEventKind = (typeof ORDERED_EVENT_KINDS)[number];

/**
 * An event as a store write hands it over, before it has a seq. `log` events name their line by
 * its log seq: the line itself is kept once, in the task's log.
 */
export type NewOrderedEvent =
  /**
   * The task entered `status` (its first event is `working`, at creation). A `completed` event
   * carries `resultDigest`, the digest of the stored result (`digestOf`, as the task's own
   * `resultDigest`): a client that learns the end from events checks the one result it fetches
   * against it (C13).
   */
  | {
      readonly kind: 'status';
      readonly status: TaskStatus;
      readonly statusMessage: string | null;
      readonly resultDigest?: string;
    }
  | { readonly kind: 'progress'; readonly progress: Progress }
  /** A new input request under `key` (the round's status change is its own `status` event). */
  | { readonly kind: 'input_requested'; readonly key: string; readonly request: InputRequest }
  /** Responses stored for these keys (the values are not repeated here). */
  | { readonly kind: 'input_answered'; readonly keys: readonly string[] }
  | { readonly kind: 'log'; readonly logSeq: number; readonly stream: LogStream };

/** One stored event. Times are epoch milliseconds from the injected clock. */
export type OrderedEvent = { readonly seq: number; readonly at: number } & (
  | Exclude<NewOrderedEvent, { kind: 'log' }>
  | {
      readonly kind: 'log';
      readonly logSeq: number;
      readonly stream: LogStream;
      /** The line, or null once the log's bound dropped it (the event stays, so seqs have no gap). */
      readonly line: LogLine | null;
    }
);

/**
 * The kinds a per-task bound may drop: a task keeps its newest `EventBound.maxKept` of them and
 * deletes the oldest beyond. Every other kind (`status`, `input_requested`, `input_answered`) is
 * always kept, so the terminal event, every status change and every input round reach every reader.
 */
export const DROPPABLE_EVENT_KINDS = ['progress', 'log'] as const satisfies readonly OrderedEventKind[];

/** Whether a per-task bound may drop an event of this kind. */
export function isDroppable(kind: OrderedEventKind): boolean {
  return (DROPPABLE_EVENT_KINDS as readonly OrderedEventKind[]).includes(kind);
}

/**
 * How many events one task keeps. A dropped event keeps its seq (the sequence has no gap in its
 * numbering); its row is deleted, and a read that passes over it counts it in `skipped`.
 */
export interface EventBound {
  /** The most `progress` and `log` events a task keeps (its newest); at least 1. */
  readonly maxKept: number;
}

/**
 * Default: 10,000 progress and log events per task, as many as the log keeps lines
 * (`DEFAULT_LOG_LIMITS.maxLines`). A progress event is about 100 bytes of row, so the bound holds a
 * task that reports without end to about a megabyte of events; its latest progress is always kept.
 */
export const DEFAULT_EVENT_BOUND: EventBound = { maxKept: 10_000 };

/** `bound` or the default, checked: `maxKept` must be an integer from 1 up (`invalid_argument`). */
export function checkEventBound(bound: EventBound | undefined): EventBound {
  if (bound === undefined) return DEFAULT_EVENT_BOUND;
  if (!Number.isSafeInteger(bound.maxKept) || bound.maxKept < 1) {
    throw new TerminusError(
      'invalid_argument',
      `eventBound.maxKept must be an integer of 1 or more, got ${String(bound.maxKept)}`,
      {
        details: { field: 'eventBound' },
      },
    );
  }
  return { maxKept: bound.maxKept };
}

/** A read of a task's events: the events after a seq plus where the sequence stands. */
export interface OrderedEventPage {
  readonly events: OrderedEvent[];
  /** The seq of the task's last event (0: none yet; every store write creates at least one). */
  readonly lastSeq: number;
}

/** The most events one read returns. */
export const MAX_EVENT_READ = 1000;
/** Events one read returns when the caller names no `limit`. */
export const DEFAULT_EVENT_READ = 100;

/**
 * The status events of a write that changes the status from `before` to `after` (none when equal).
 * A change to `completed` carries the result's digest, where `after` has one.
 */
export function statusChange(
  before: TaskStatus | null,
  after: { readonly status: TaskStatus; readonly statusMessage: string | null; readonly resultDigest?: string | null },
): NewOrderedEvent[] {
  if (before === after.status) return [];
  const digest = after.status === 'completed' && typeof after.resultDigest === 'string' ? after.resultDigest : null;
  return [
    {
      kind: 'status',
      status: after.status,
      statusMessage: after.statusMessage,
      ...(digest === null ? {} : { resultDigest: digest }),
    },
  ];
}

/** The stored shape of an event's payload (everything but kind, seq and time), as every backend keeps it. */
export function eventData(event: NewOrderedEvent): Record<string, unknown> {
  const { kind: _kind, ...data } = event;
  return data;
}
