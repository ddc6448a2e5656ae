/**
 * One push stream per connection for the tasks the executor waits on (never one per operation):
 * the Tasks extension's `subscriptions/listen` naming the watched ids, or the 2025-11-25 session's
 * GET stream (which carries every task of the session). What arrives on it are hints only: the
 * executor reads the task before acting on one, and keeps polling at the server's interval all the
 * while, so a stream that drops, is refused or loses a push costs latency, never an outcome.
 *
 * - A new watched id (listen) replaces the stream by one naming every watched id: the old one is
 *   closed first (one stream at a time), and our server reads each watched task once when a stream
 *   starts, so a change made between the two streams is pushed on the new one (and polled anyway).
 *   Ids that stop being watched are dropped at the next replacement; with none left it closes.
 * - A stream that ends by itself is opened again after 1 s, doubling to 30 s (reset once a stream
 *   lived 30 s), or after the server's Retry-After on 429/503.
 * - A refusal (HTTP 4xx, a JSON-RPC error: the server has no such stream) ends listening on this
 *   connection for good: polling is the baseline (reference 2.7).
 * - A log follower watches with `{ logs: true }`: the stream then also asks for our log pushes
 *   (`notifications["terminus/taskLogs"]`, X-67: never sent unasked), which only bring the
 *   follower's next cursor read forward. The first log watch on a stream without them replaces it.
 */
import type { Clock } from '../../core/ports.js';
import { WireFailure } from '../wire-port.js';
import type { OpenedStream } from './connection.js';

export type ListenerState = 'idle' | 'opening' | 'open' | 'retrying' | 'unsupported' | 'closed';

export interface TaskListenerOptions {
  readonly clock: Clock;
  /** Opens the stream for these ids (a session stream ignores them), asking for log pushes when `logs`. */
  readonly open: (taskIds: readonly string[], signal: AbortSignal, logs: boolean) => Promise<OpenedStream>;
  /** The stream carries every task of the connection: a new id needs no new stream. */
  readonly allTasks: boolean;
  /** Told of every state change (tests, status lines). */
  readonly onState?: (state: ListenerState, detail: string) => void;
}

const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/** A stream that lived this long was healthy: the next drop starts the back-off again at 1 s. */
const HEALTHY_MS = 30_000;

export class TaskListener {
  readonly #o: TaskListenerOptions;
  readonly #watched = new Map<string, number>();
  /** Watches by log followers, per id (also counted in `#watched`). */
  readonly #logWatched = new Map<string, number>();
  /** The open (or opening) stream asked for log pushes. */
  #coveredLogs = false;
  readonly #closing = new AbortController();
  #state: ListenerState = 'idle';
  /** Ids the open (or opening) stream names. */
  #covered = new Set<string>();
  #current: AbortController | null = null;
  #running = false;
  /** Resolves the wait of the running stream when a new id needs a new one. */
  #changed: (() => void) | null = null;
  /** How many times the listener opened a stream (tests). */
  opened = 0;

  constructor(options: TaskListenerOptions) {
    this.#o = options;
  }

  get state(): ListenerState {
    return this.#state;
  }

  /**
   * Listen for `taskId` until the returned function is called (counted: watch twice, stop twice);
   * `logs`: for a log follower, whose stream must also carry the task's log pushes.
   */
  watch(taskId: string, options: { readonly logs?: boolean } = {}): () => void {
    const logs = options.logs === true;
    this.#watched.set(taskId, (this.#watched.get(taskId) ?? 0) + 1);
    if (logs) this.#logWatched.set(taskId, (this.#logWatched.get(taskId) ?? 0) + 1);
    const uncovered = !this.#o.allTasks && !this.#covered.has(taskId);
    if (uncovered || (logs && !this.#coveredLogs)) this.#changed?.();
    this.#start();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      const left = (this.#watched.get(taskId) ?? 1) - 1;
      if (left > 0) this.#watched.set(taskId, left);
      else this.#watched.delete(taskId);
      if (logs) {
        const logsLeft = (this.#logWatched.get(taskId) ?? 1) - 1;
        if (logsLeft > 0) this.#logWatched.set(taskId, logsLeft);
        else this.#logWatched.delete(taskId);
      }
      if (this.#watched.size === 0) this.#changed?.();
    };
  }

  /** Closes the stream and stops listening (the executor closes). */
  close(): void {
    this.#closing.abort();
    this.#current?.abort();
    this.#set('closed', 'closed by the client');
  }

  #set(state: ListenerState, detail: string): void {
    if (this.#state === 'closed' || this.#state === state) return;
    this.#state = state;
    this.#o.onState?.(state, detail);
  }

  #start(): void {
    if (this.#running || this.#state === 'unsupported' || this.#state === 'closed') return;
    this.#running = true;
    void this.#run().finally(() => {
      this.#running = false;
      // A watch that arrived as the loop ended.
      if (this.#watched.size > 0 && this.#state === 'idle') this.#start();
    });
  }

  async #run(): Promise<void> {
    let delay = RETRY_BASE_MS;
    const closing = this.#closing.signal;
    // Let the watches of one turn (a batch of submissions) share the first stream.
    await Promise.resolve();
    while (!closing.aborted && this.#watched.size > 0) {
      const ids = [...this.#watched.keys()];
      const logs = this.#logWatched.size > 0;
      const abort = new AbortController();
      this.#current = abort;
      this.#covered = new Set(ids);
      this.#coveredLogs = logs;
      const changed = new Promise<'changed'>((resolve) => (this.#changed = () => resolve('changed')));
      this.#set('opening', `${ids.length} task(s)`);
      let stream: OpenedStream;
      try {
        stream = await this.#o.open(ids, AbortSignal.any([abort.signal, closing]), logs);
      } catch (error) {
        if (closing.aborted) return;
        if (error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found')) {
          this.#set('unsupported', error.message);
          return;
        }
        const wait = error instanceof WireFailure && error.retryAfterMs !== undefined ? error.retryAfterMs : delay;
        this.#set('retrying', `${String(error)}; again in ${wait} ms`);
        await this.#o.clock.sleep(wait, closing).catch(() => undefined);
        delay = Math.min(delay * 2, RETRY_MAX_MS);
        continue;
      }
      this.opened++;
      const since = this.#o.clock.now();
      this.#set('open', `${ids.length} task(s)`);
      const why = await Promise.race([stream.ended, changed]);
      if (why === 'changed' || closing.aborted) {
        // Replaced (or closed): the old stream ends before the next one opens.
        abort.abort();
        await stream.ended;
        continue;
      }
      if (this.#o.clock.now() - since >= HEALTHY_MS) delay = RETRY_BASE_MS;
      if (this.#watched.size === 0) break;
      this.#set('retrying', `${why}; again in ${delay} ms`);
      // A new id ends the wait: it needs a stream now, and the server is taking streams again.
      const wake = new AbortController();
      void changed.then(() => wake.abort());
      await this.#o.clock.sleep(delay, AbortSignal.any([wake.signal, closing])).catch(() => undefined);
      if (!wake.signal.aborted) delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
    this.#current = null;
    this.#covered = new Set();
    this.#coveredLogs = false;
    this.#changed = null;
    this.#set('idle', 'nothing to listen for');
  }
}
