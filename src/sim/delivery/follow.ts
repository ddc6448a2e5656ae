/**
 * The event readers of a series (issue 32): for every operation, a consumer of the real
 * `executor.events()` that keeps the cursor it was handed after each event, as an application
 * persists it. Its stream breaks (`event_stream_cut`: the consumer stops after an event) and its
 * process dies (an executor crash); each time it resumes from the cursor it holds, through the same
 * faulty network as every other read. What each reader saw, seq by seq, is what the checker reads:
 * no event twice, none skipped.
 */
import { ExecutorError } from '../../executor/executor-types.js';
import { isSettled } from '../../executor/transitions.js';
import type { ClockScope } from '../clock.js';
import { fireRule, type FaultClass, type RuleSink } from '../faults.js';
import type { SimClient } from '../client/sim-client.js';
import type { SimRandom } from '../random.js';
import type { Trace } from '../trace.js';

/** What one operation's reader saw. */
export interface ReaderState {
  /** Every event's seq, in the order handed out (over every resumption). */
  readonly seqs: number[];
  /** The last status event seen. */
  lastStatus: string | null;
  cursor: string | undefined;
  /** The server said the sequence is complete. */
  done: boolean;
  /** Why it stopped before that (the operation has no task, the server keeps no events). */
  ended: string | null;
  /** Resumptions so far (cuts, crashes, failed starts). */
  resumed: number;
  /** Reads in a row answered "no task" (never created, expired, or a server that lost it for a while). */
  noTask: number;
  generation: number;
}

export interface ReadersOptions {
  readonly scope: ClockScope;
  readonly random: SimRandom;
  readonly trace: Trace;
  readonly rules: RuleSink['rules'];
  readonly fired: Map<FaultClass, number>;
  /** The live executor process, or null between a crash and the restart. */
  readonly client: () => SimClient | null;
  /** Test-only: the cursor a resumption reads from (a broken reader forgets it). */
  readonly resumeFrom?: (cursor: string | undefined) => string | undefined;
}

/** Resumptions after which a reader that cannot start is left (an operation the ledger never got). */
const MAX_RESUMES = 200;
/** "No task" answers in a row after which the reader stops: the operation has no task to read. */
const MAX_NO_TASK = 10;

export class EventReaders {
  readonly states = new Map<string, ReaderState>();
  readonly #o: ReadersOptions;
  readonly #sink: RuleSink;

  constructor(options: ReadersOptions) {
    this.#o = options;
    this.#sink = { rules: options.rules, random: options.random, fired: options.fired, trace: options.trace };
  }

  /** Starts reading `op`'s events from the first. */
  start(op: string): void {
    if (this.states.has(op)) return;
    const state: ReaderState = {
      seqs: [],
      lastStatus: null,
      cursor: undefined,
      done: false,
      ended: null,
      resumed: 0,
      noTask: 0,
      generation: 0,
    };
    this.states.set(op, state);
    void this.#read(op, state, 0);
  }

  /** A new executor process: every unfinished reader resumes from its cursor (the old ones died with theirs). */
  restart(): void {
    for (const [op, state] of this.states) {
      if (state.done || state.ended !== null) continue;
      state.generation++;
      this.#again(op, state, 0);
    }
  }

  /** Every reader finished (or stopped for a reason it recorded). */
  get settled(): boolean {
    for (const state of this.states.values()) if (!state.done && state.ended === null) return false;
    return true;
  }

  #again(op: string, state: ReaderState, afterMs: number): void {
    const generation = state.generation;
    if (++state.resumed > MAX_RESUMES) {
      state.ended = `gave up after ${MAX_RESUMES} resumptions`;
      return;
    }
    const { scope } = this.#o;
    scope.at(scope.now() + afterMs, () => void this.#read(op, state, generation));
  }

  async #read(op: string, state: ReaderState, generation: number): Promise<void> {
    const { random, trace } = this.#o;
    const client = this.#o.client();
    if (client === null || !client.alive) {
      this.#again(op, state, 1_000);
      return;
    }
    const stale = (): boolean => !client.alive || state.generation !== generation;
    const from = state.seqs.length === 0 ? undefined : (this.#o.resumeFrom ?? ((c) => c))(state.cursor);
    let cut = false;
    let follower;
    try {
      follower = await client.events(op, {
        ...(from === undefined ? {} : { cursor: from }),
        intervalMs: 1_000,
        onRetry: (failure, inMs) =>
          trace.add('reader', `${op}: ${failure.kind} (${failure.message}), again in ${inMs}ms`),
      });
      if (follower === null) {
        if (!stale()) this.#again(op, state, 500);
        return;
      }
      for await (const event of follower) {
        // A dead process's reads go nowhere: what it still received is nobody's.
        if (stale()) return;
        state.noTask = 0;
        state.seqs.push(event.seq);
        if (event.kind === 'status') state.lastStatus = String(event.status);
        state.cursor = follower.cursor;
        if (fireRule(this.#sink, 'event_stream_cut', op) !== null) {
          cut = true;
          break;
        }
      }
    } catch (error) {
      if (stale()) return;
      if (error instanceof ExecutorError && error.code === 'no_events') {
        state.ended = 'the server keeps no events';
        return;
      }
      // Settled without a task (a synchronous answer, never created): nothing to read, ever.
      const settledWithout = error instanceof ExecutorError && error.state !== undefined && isSettled(error.state);
      if (
        settledWithout ||
        (error instanceof ExecutorError && error.code === 'no_task' && ++state.noTask >= MAX_NO_TASK)
      ) {
        state.ended = 'no task';
        return;
      }
      trace.add('reader', `${op}: ${error instanceof Error ? error.message : String(error)}`);
      this.#again(op, state, 2_000);
      return;
    }
    if (stale()) return;
    if (!cut && follower.done) {
      state.done = true;
      trace.add('reader', `${op}: done at ${follower.seq}`);
      return;
    }
    trace.add('reader', `${op}: resumes after ${state.cursor ?? 'the start'}`);
    this.#again(op, state, random.int(500, 5_000));
  }
}
