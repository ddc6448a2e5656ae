/**
 * Ports the core needs from the outside world. `core/`, `runner/` and `executor/` never read the
 * wall clock, `Math.random` or `crypto.randomUUID` directly: they take these, so the simulation can
 * replace them with virtual time and a seeded source.
 */

export interface Clock {
  /**
   * Milliseconds since the epoch, as an integer. MUST NOT return a fraction: `now` is stored in
   * STRICT INTEGER columns (the SQLite store rejects 1.5) and compared for equality (timer `dueAt`).
   * A virtual clock stays integral only if every `sleep` is: callers that compute a delay with
   * jitter round it (`Math.round` / `Math.ceil`) where the jitter is computed.
   */
  now(): number;
  /** Resolves after `ms` (an integer; callers round computed delays); rejects with the signal's reason when aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
}

export interface Ids {
  /** A task id: 128 random bits, base64url. */
  taskId(): string;
  /** Any other opaque unique id (worker ids, receipt ids, submission keys). */
  unique(prefix: string): string;
}

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * A logger that drops everything (the engine's default; `createTerminus` defaults to `stderrLogger`).
 * @example
 * const engine = createEngine({ store, tools: [report], logger: silentLogger });
 */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
