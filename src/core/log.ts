/**
 * A task's own log (issue 18): the lines a handler writes with `ctx.log` / `ctx.output` while it
 * runs, durable and fenced like every worker write, numbered per task, bounded per task. Never
 * mixed with the server's own logs (those go to the `Logger`).
 */

/** `log`: a line for a person (`ctx.log`); `output`: a chunk of partial result (`ctx.output`). */
export const LOG_STREAMS = ['log', 'output'] as const;
/** One of `LOG_STREAMS`. */
export type LogStream = (typeof LOG_STREAMS)[number];

/** A line as a handler hands it to the store: the store numbers it and stamps epoch and time. */
export interface NewLogLine {
  readonly stream: LogStream;
  readonly text: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** One stored line. Times are epoch milliseconds from the injected clock (the wires show ISO 8601). */
export interface LogLine extends NewLogLine {
  /** 1, 2, 3, ... per task; never repeats, not even after the oldest lines were dropped. */
  readonly seq: number;
  /** The execution epoch of the run that wrote it: a re-run after a crash writes the next one. */
  readonly epoch: number;
  readonly at: number;
}

/**
 * How much log one task keeps. Past either bound the oldest lines are deleted and counted in
 * `dropped`; the newest line is always kept (one line never exceeds `maxBytes`, see `maxLineBytes`).
 */
export interface LogBound {
  readonly maxLines: number;
  /** UTF-8 bytes of text plus the JSON of fields, summed over the kept lines. */
  readonly maxBytes: number;
}

/**
 * Defaults: 10,000 lines and 4 MiB per task, 8 KiB of text per line. A test suite of a few thousand
 * cases logs a line or two per case, so 10,000 lines keep a whole run; 4 MiB x the 10,000 live
 * tasks a caller may have (`maxLiveTasksPerOwner`) bounds one caller's logs to 40 GiB in the worst
 * case, and a typical line is under 200 bytes, so the line bound is the one normally met.
 */
export const DEFAULT_LOG_LIMITS = {
  maxLines: 10_000,
  maxBytes: 4 * 1024 * 1024,
  /** A longer text is truncated to this many bytes and marked; fields may have as many bytes of JSON. */
  maxLineBytes: 8 * 1024,
} as const;

/**
 * The longest text `ctx.log` accepts at all (1 MiB, 128 lines' worth): beyond it the caller is
 * logging a file, not a line, and gets `invalid_argument` instead of a truncated megabyte.
 */
export const MAX_LOG_TEXT_BYTES = 1024 * 1024;

/** The most lines one read returns, and the default (`terminus/tasks/logs` `limit`). */
export const MAX_LOG_READ = 1000;
/** Lines one read returns when the caller names no `limit`. */
export const DEFAULT_LOG_READ = 100;

/** Bytes a line counts against `LogBound.maxBytes`. */
export function logLineBytes(line: NewLogLine): number {
  return (
    Buffer.byteLength(line.text, 'utf8') +
    (line.fields === undefined ? 0 : Buffer.byteLength(JSON.stringify(line.fields)))
  );
}

/** A read of a task's log: the lines after a cursor plus where the log stands. */
export interface LogPage {
  readonly lines: LogLine[];
  /** The highest seq ever written (0: none). */
  readonly lastSeq: number;
  /** Lines deleted so far by the bound. */
  readonly dropped: number;
}
