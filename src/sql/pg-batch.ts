import { isUnavailable } from './pg-errors.js';

/**
 * Group commit for PostgreSQL writes. Calls made in one event-loop turn are sent together as ONE
 * statement (one round trip, one commit, one WAL flush) at the end of the turn; while a batch is
 * in flight the next calls gather for the next one, so under load the batches grow instead of the
 * statements. Each caller's promise settles only after the statement that carries its write has
 * returned, i.e. committed (S1, S9): nothing is acknowledged before its commit.
 *
 * A batch statement that PostgreSQL refused (a constraint, a value it cannot store) rolled back
 * as a whole, so every item is then run again alone with `single`: only the item at fault fails.
 * A batch that lost its connection is NOT run again (it may have committed): every item rejects
 * with the error, as one statement would.
 */
export interface Batcher<I, O> {
  /** Adds `item` to the next batch; resolves with its own outcome once that batch committed. */
  run(item: I): Promise<O>;
  /** Resolves once every item added so far has settled (before the pool is closed). */
  drain(): Promise<void>;
}

/** One item's outcome in a batch: a value, or an error for that item alone. */
export type BatchOutcome<O> =
  { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

export interface BatcherOptions<I, O> {
  /** Most items per statement. */
  readonly maxBatch: number;
  /** Batches in flight at once (each on its own pooled connection); more calls wait for the next. */
  readonly maxInFlight: number;
  /** Runs `items` as one statement; one outcome per item, in order. */
  readonly batch: (items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
  /** Runs one item on its own (after its batch was refused as a whole). */
  readonly single: (item: I) => Promise<O>;
  /** Maps an error to what callers see (`mapError`). */
  readonly mapError: (error: unknown) => unknown;
}

interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

export function createBatcher<I, O>(options: BatcherOptions<I, O>): Batcher<I, O> {
  const pending: Pending<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;
  const idle: (() => void)[] = [];

  const settle = (entry: Pending<I, O>, outcome: BatchOutcome<O>): void => {
    if (outcome.ok) entry.resolve(outcome.value);
    else entry.reject(options.mapError(outcome.error));
  };

  const alone = (entry: Pending<I, O>): Promise<void> =>
    options.single(entry.item).then(entry.resolve, (error: unknown) => entry.reject(options.mapError(error)));

  const send = async (entries: readonly Pending<I, O>[]): Promise<void> => {
    let outcomes: readonly BatchOutcome<O>[];
    try {
      outcomes = await options.batch(entries.map((e) => e.item));
    } catch (error) {
      // The server refused the statement (an error it reports, with a severity): it rolled back.
      // Anything else (the connection broke) may have committed: nothing is run twice.
      if (entries.length > 1 && refused(error)) {
        await Promise.all(entries.map(alone));
      } else {
        for (const entry of entries) entry.reject(options.mapError(error));
      }
      return;
    }
    entries.forEach((entry, i) => settle(entry, outcomes[i] ?? { ok: false, error: new Error('no outcome') }));
  };

  const flush = (): void => {
    scheduled = false;
    while (pending.length > 0 && inFlight < options.maxInFlight) {
      const entries = pending.splice(0, options.maxBatch);
      inFlight += 1;
      void send(entries).finally(() => {
        inFlight -= 1;
        if (pending.length > 0) schedule();
        else if (inFlight === 0) for (const done of idle.splice(0)) done();
      });
    }
  };

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };

  return {
    run(item) {
      return new Promise<O>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        schedule();
      });
    },
    drain() {
      if (pending.length === 0 && inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}

/**
 * An error the server reported for the statement (pg's `DatabaseError` carries a `severity`; ours
 * wrap it as `cause`), not a lost connection.
 */
function refused(error: unknown): boolean {
  const raw = (error as { cause?: unknown } | null)?.cause ?? error;
  return typeof (raw as { severity?: unknown } | null)?.severity === 'string' && !isUnavailable(raw);
}
