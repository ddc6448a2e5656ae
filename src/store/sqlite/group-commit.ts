import type { Database } from 'better-sqlite3';
import { TerminusError } from '../../core/errors.js';

/**
 * Group commit. Writes are queued and flushed together in ONE `BEGIN IMMEDIATE` transaction per
 * event-loop turn (`setImmediate`), so one WAL fsync serves every write of that turn and the event
 * loop is blocked once per batch instead of once per task. Each queued write runs in its own
 * savepoint: one that throws (a submission-key conflict, a lost lease) rolls back alone and rejects
 * its own caller, the others still commit. Every caller's promise settles only after COMMIT
 * returned, which with `synchronous=FULL` means after the fsync (S1, S9).
 *
 * Measured reason (`npx tsx test/store/group-commit.bench.ts`, 2,000 concurrent creates on a real
 * ext4 file, WAL + synchronous=FULL, 2 shared cores at load 5-10, medians of 3-5 rounds):
 * one transaction per create (`maxBatch: 1`) gave 185-1,390 creates/s, i.e. one 0.7-5 ms fsync
 * per task; group commit (batches of up to 512) gave 9,900-14,300 creates/s, 7-50x more, and its
 * longest event-loop block (35-76 ms for a full 512 batch) was no worse than the per-create run's
 * (16-72 ms, a single slow fsync). Batches of 128 were not measurably gentler, so 512 is the default.
 */
export interface WriteQueue {
  /**
   * Runs `write` inside the next batch's transaction; resolves with its value after COMMIT. A
   * `patient` write (a runner's: a finish, progress, a heartbeat) has no caller waiting on its
   * answer to send the next request, so a batch of only patient writes waits up to the queue's
   * `commitDelayMs` for company; any other write flushes the batch at the end of its turn.
   */
  enqueue<T>(write: () => T, patient?: boolean): Promise<T>;
  /**
   * A caller started (`true`) or stopped (`false`) blocking on a task's next change. While any
   * caller blocks, patient writes do not wait for company (a blocked caller waits for one of them,
   * a finish most often), and a batch already waiting commits at the end of this turn.
   */
  callerWaiting(waiting: boolean): void;
  /** Flushes what is queued, then refuses further writes. */
  drain(): Promise<void>;
}

interface Pending {
  readonly write: () => unknown;
  readonly patient: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Settled = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** One group-commit transaction: how many writes it carried, its time (BEGIN to COMMIT), whether it committed. */
export interface CommitReport {
  readonly writes: number;
  readonly seconds: number;
  readonly ok: boolean;
}

/**
 * How long a batch of only patient writes waits for another write (default 1 ms). Measured reason:
 * one client submitting over stdio, one create at a time, paid two fsyncs per create: the create's,
 * then its 0 ms task's finish, which committed alone while the client was sending the next create
 * (`npx tsx bench/create-stdio.ts`; docs/benchmarks.md). Waiting, the finish shares the next
 * create's commit. Like PostgreSQL's `commit_delay`, it trades a bounded delay of a runner's write
 * (never of a caller's answer) for fewer fsyncs.
 */
export const DEFAULT_COMMIT_DELAY_MS = 1;

/**
 * The longest `commitDelayMs`: 100 ms, PostgreSQL's own cap on `commit_delay`. The delay holds
 * heartbeats too, and the store does not know the runner's lease: 100 ms stays under the
 * executor's 250 ms poll floor (a finish is visible by the next poll) and far under any lease a
 * heartbeat renews, while sharing an fsync needs only the next caller's write, a millisecond or two away.
 */
export const MAX_COMMIT_DELAY_MS = 100;

/** `commitDelayMs` checked: an integer from 0 to `MAX_COMMIT_DELAY_MS`, else `invalid_argument`. */
export function checkCommitDelay(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_COMMIT_DELAY_MS;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_COMMIT_DELAY_MS) {
    throw new TerminusError(
      'invalid_argument',
      `commitDelayMs must be an integer from 0 to ${MAX_COMMIT_DELAY_MS} (milliseconds), got ${String(ms)}`,
      { details: { field: 'commitDelayMs' } },
    );
  }
  return ms;
}

export interface WriteQueueOptions {
  readonly maxBatch: number;
  readonly mapError: (e: unknown) => unknown;
  readonly onCommit?: (report: CommitReport) => void;
  /** How long a batch of only patient writes waits; 0 commits it at the end of its turn. */
  readonly commitDelayMs?: number;
}

export function createWriteQueue(db: Database, options: WriteQueueOptions): WriteQueue {
  const { maxBatch, mapError, onCommit } = options;
  const commitDelayMs = options.commitDelayMs ?? DEFAULT_COMMIT_DELAY_MS;
  const pending: Pending[] = [];
  const drained: (() => void)[] = [];
  let scheduled = false;
  let delayed: NodeJS.Timeout | undefined;
  let urgent = 0; // pending writes that are not patient
  let waiters = 0; // callers blocked on a task's next change
  let closed = false;

  // better-sqlite3 turns a transaction function called inside another into a SAVEPOINT.
  const inSavepoint = db.transaction((write: () => unknown) => write());
  const inBatch = db.transaction((batch: readonly Pending[]) =>
    batch.map((op): Settled => {
      try {
        return { ok: true, value: inSavepoint(op.write) };
      } catch (error) {
        return { ok: false, error: mapError(error) };
      }
    }),
  );

  const flush = (): void => {
    scheduled = false;
    clearTimeout(delayed);
    delayed = undefined;
    const batch = pending.splice(0, maxBatch);
    for (const op of batch) if (!op.patient) urgent -= 1;
    let settled: Settled[];
    const started = performance.now();
    let committed = true;
    try {
      settled = inBatch.immediate(batch);
    } catch (error) {
      // BEGIN or COMMIT failed: nothing of this batch is durable, so every caller hears it.
      committed = false;
      settled = batch.map(() => ({ ok: false, error: mapError(error) }));
    }
    try {
      onCommit?.({ writes: batch.length, seconds: (performance.now() - started) / 1000, ok: committed });
    } catch {
      // A metrics callback must not keep the batch's callers from hearing their outcome.
    }
    batch.forEach((op, i) => {
      const result = settled[i];
      if (result?.ok === true) op.resolve(result.value);
      else op.reject(result?.error);
    });
    if (pending.length > 0) schedule();
    else for (const done of drained.splice(0)) done();
  };

  const schedule = (): void => {
    if (scheduled) return;
    if (urgent === 0 && waiters === 0 && !closed && commitDelayMs > 0) {
      delayed ??= setTimeout(flush, commitDelayMs);
      return;
    }
    scheduled = true;
    setImmediate(flush);
  };

  return {
    enqueue<T>(write: () => T, patient = false): Promise<T> {
      if (closed) return Promise.reject(new TerminusError('unavailable', 'task store is closed'));
      return new Promise<T>((resolve, reject) => {
        pending.push({ write, patient, resolve: resolve as (value: unknown) => void, reject });
        if (!patient) urgent += 1;
        schedule();
      });
    },
    callerWaiting(waiting: boolean): void {
      waiters = Math.max(0, waiters + (waiting ? 1 : -1));
      if (waiting && delayed !== undefined) {
        clearTimeout(delayed);
        delayed = undefined;
        schedule();
      }
    },
    drain(): Promise<void> {
      closed = true;
      if (pending.length === 0) return Promise.resolve();
      schedule();
      return new Promise((resolve) => drained.push(resolve));
    },
  };
}
