/**
 * Listen streams in the simulation: the server side of `subscriptions/listen` (reference 2.7) as our
 * server serves it, on virtual time, with the push faults of `push-faults.ts`. A stream watches the
 * ids it was opened with; it reads each of them once when it opens, and again after every change the
 * engine publishes, through the real `tasks/get` handler (so a notification carries exactly the
 * `DetailedTask` a read would return then), and sends it when it differs from the last one it sent.
 *
 * The client side is the real `TaskListener` (one stream per executor process, reopened with
 * back-off) and the real adapter's `onStatusHint`: what arrives is a hint the executor must read
 * before acting on. On 2025-11-25 (`legacy`) the stream is the session's GET stream: it carries
 * every task of the connection, as `notifications/tasks/status` with the legacy `Task` a `tasks/get`
 * returns then. A push cut, lost, duplicated, reordered or late is delivered
 * as such; a server that crashed ends every stream (its connections died with it).
 */
import type { ClockScope } from '../clock.js';
import type { NotificationListener, OpenedStream } from '../../executor/adapters/connection.js';
import { TaskListener } from '../../executor/adapters/task-listener.js';
import { WireFailure } from '../../executor/wire-port.js';
import { fireRule, type FaultClass, type MessageRule, type PushFaultClass } from '../faults.js';
import type { SimRandom } from '../random.js';
import { ServerDown, type SimServer } from '../server/host.js';
import type { ServerFacts } from '../server/facts.js';
import type { Trace } from '../trace.js';

export interface PushOptions {
  readonly scope: ClockScope;
  readonly random: SimRandom;
  readonly trace: Trace;
  readonly server: SimServer;
  readonly facts: ServerFacts;
  readonly rules: readonly MessageRule[];
  readonly fired: Map<FaultClass, number>;
  readonly principal: string;
}

/** Which era's stream: `subscriptions/listen` (modern) or the 2025-11-25 session's GET stream. */
export type PushEra = 'modern' | 'legacy';

const NOTIFICATION: Readonly<Record<PushEra, string>> = {
  modern: 'notifications/tasks',
  legacy: 'notifications/tasks/status',
};

/** A server->client request on a push stream has nowhere to go (a stream's reads ask nothing). */
const NO_STREAM = {
  signal: new AbortController().signal,
  send: () => Promise.reject(new Error('no client stream')),
};

interface Stream {
  readonly n: number;
  readonly era: PushEra;
  /** The ids it watches; null: every task of the connection (the 2025 session stream). */
  readonly ids: ReadonlySet<string> | null;
  readonly alive: () => boolean;
  readonly send: (params: Record<string, unknown>) => void;
  readonly last: Map<string, string>;
  /** Per task: reads and sends leave in the order of the changes. */
  readonly chains: Map<string, Promise<void>>;
  /** A push held back by `push_reordered`, sent after the next one about its task. */
  readonly held: Map<string, Record<string, unknown>>;
  end(why: string): void;
  open: boolean;
}

/** Notifications sent, by kind, for the series trace and tests. */
export interface PushCounts {
  streams: number;
  sent: number;
}

export class SimPush {
  readonly #o: PushOptions;
  readonly #streams = new Set<Stream>();
  /** Every client process's listener: closed by `dispose()` at the series end. */
  readonly #listeners = new Set<TaskListener>();
  #n = 0;
  readonly counts: PushCounts = { streams: 0, sent: 0 };

  constructor(options: PushOptions) {
    this.#o = options;
  }

  /** The server published a change of `taskId` (created, progress, status...). */
  changed(taskId: string): void {
    for (const stream of [...this.#streams]) {
      if (!stream.alive()) stream.end('client gone');
      else if (stream.ids === null || stream.ids.has(taskId)) this.#read(stream, taskId);
    }
  }

  /**
   * What one executor process gets: where notifications arrive, and its one listener (the real
   * `TaskListener`, on the process's clock scope: it dies with the process).
   */
  client(scope: ClockScope, alive: () => boolean, era: PushEra = 'modern') {
    const listeners = new Set<NotificationListener>();
    const onNotification = (listener: NotificationListener): (() => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    };
    const send = (params: Record<string, unknown>): void => {
      if (!alive()) return;
      for (const listener of [...listeners]) listener(NOTIFICATION[era], params);
    };
    const listener = new TaskListener({
      clock: scope,
      allTasks: era === 'legacy',
      open: (taskIds, signal) => this.#open(taskIds, signal, alive, send, era),
    });
    this.#listeners.add(listener);
    return { onNotification, listener };
  }

  /**
   * Closes the listeners of processes that died with a stream open. A dead process's listener still
   * holds abort listeners on its `AbortSignal.any` signals, which Node keeps reachable while they
   * have listeners: each series left about 140 KB alive (RSS 432 MB at 1,000 series, 1,616 MB at
   * 10,000) until this ran at its end.
   */
  dispose(): void {
    for (const listener of this.#listeners) listener.close();
    this.#listeners.clear();
  }

  #open(
    taskIds: readonly string[],
    signal: AbortSignal,
    alive: () => boolean,
    send: (params: Record<string, unknown>) => void,
    era: PushEra,
  ): Promise<OpenedStream> {
    const { scope } = this.#o;
    return new Promise((resolve, reject) => {
      // The listen request crosses the network like any other.
      scope.at(scope.now() + this.#latency(), () => {
        if (!alive() || signal.aborted) return reject(new WireFailure('lost', 'listen request not answered'));
        if (!this.#o.server.up) return reject(new WireFailure('lost', 'connection refused'));
        let finish: (why: string) => void = () => undefined;
        const ended = new Promise<string>((done) => (finish = done));
        const stream: Stream = {
          n: ++this.#n,
          era,
          ids: era === 'legacy' ? null : new Set(taskIds),
          alive,
          send,
          last: new Map(),
          chains: new Map(),
          held: new Map(),
          open: true,
          end: (why) => {
            if (!stream.open) return;
            stream.open = false;
            this.#streams.delete(stream);
            this.#o.trace.add('push', `stream ${stream.n} ended: ${why}`);
            finish(why);
          },
        };
        signal.addEventListener('abort', () => stream.end('closed by the client'), { once: true });
        this.#streams.add(stream);
        this.counts.streams++;
        this.#o.trace.add('push', `stream ${stream.n} open for ${taskIds.length} task(s)`);
        resolve({ ended });
        for (const taskId of taskIds) this.#read(stream, taskId);
      });
    });
  }

  #latency(): number {
    const r = this.#o.random;
    return r.chance(0.03) ? r.int(100, 1_500) : r.int(1, 30);
  }

  #read(stream: Stream, taskId: string): void {
    const previous = stream.chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (!stream.open || !stream.alive()) return;
      let task: Record<string, unknown>;
      try {
        task =
          stream.era === 'legacy'
            ? await this.#o.server.dispatchLegacy('tasks/get', { taskId }, this.#o.principal, NO_STREAM)
            : await this.#o.server.dispatch('tasks/get', { taskId }, this.#o.principal);
      } catch (error) {
        if (error instanceof ServerDown) stream.end('server gone');
        return; // expired or purged: nothing to report
      }
      const text = JSON.stringify(task);
      if (!stream.open || stream.last.get(taskId) === text) return;
      stream.last.set(taskId, text);
      this.#deliver(stream, taskId, task);
    });
    stream.chains.set(
      taskId,
      next.catch(() => undefined),
    );
  }

  /** One push leaves the server: the faults decide how (and whether) it arrives. */
  #deliver(stream: Stream, taskId: string, task: Record<string, unknown>): void {
    const { scope } = this.#o;
    const op = this.#o.facts.tasks.get(taskId)?.callNode ?? null;
    const arrive = (params: Record<string, unknown>, delay: number): void => {
      scope.at(scope.now() + delay, () => {
        if (!stream.open) return;
        this.counts.sent++;
        stream.send(params);
      });
    };
    if (this.#fire('stream_cut', op) !== null) {
      stream.end('stream dropped');
      return;
    }
    const held = stream.held.get(taskId);
    stream.held.delete(taskId);
    const latency = this.#latency();
    // A push held back arrives just after this one (or after where this one would have arrived).
    const release = (): void => {
      if (held !== undefined) arrive(held, latency + 1);
    };
    if (this.#fire('push_lost', op) !== null) return release();
    const late = this.#fire('push_late', op);
    if (late !== null) {
      arrive(task, late.arg);
      return release();
    }
    if (held === undefined && this.#fire('push_reordered', op) !== null) {
      stream.held.set(taskId, task);
      // Sent after the next push about the task, or after 2 s if none comes.
      scope.at(scope.now() + 2_000, () => {
        if (stream.held.get(taskId) !== task) return;
        stream.held.delete(taskId);
        arrive(task, this.#latency());
      });
      return;
    }
    arrive(task, latency);
    release();
    if (this.#fire('push_duplicated', op) !== null) arrive(task, latency + this.#latency());
  }

  /** The first live rule of `fault` for `op` that fires now (drawing its probability), as the network's. */
  #fire(fault: PushFaultClass, op: string | null): MessageRule | null {
    return fireRule(this.#o, fault, op);
  }
}
