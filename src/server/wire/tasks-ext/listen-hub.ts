import type { TaskEngine } from '../../../runner/engine-port.js';
import { CallerSlots, type SlotRefusal } from '../../caller-slots.js';
import type { ServerLimits } from '../../limits.js';
import { encodeDetailedTask } from './encode.js';

/** Without events from other nodes, each watched task is re-read this often: once, for every stream. */
const POLL_MS = 2000;

type Detailed = ReturnType<typeof encodeDetailedTask>;

/** One open stream as the hub sees it. */
export interface ListenStream {
  readonly owner: string;
  /** Called with a task's `DetailedTask` whenever the hub read it; the stream drops repeats. */
  readonly deliver: (taskId: string, task: Detailed) => void;
  /**
   * For a stream that asked for log lines: called on each `log` event of a watched task and on
   * each poll (lines written on another node), so the stream reads the lines after its cursor.
   */
  readonly logs?: (taskId: string) => void;
}

interface Watched {
  readonly owner: string;
  readonly taskId: string;
  readonly streams: Set<ListenStream>;
  /** Serialises reads of this task, so deliveries leave in the order of the changes. */
  chain: Promise<void>;
  /** A read is queued behind the running one: one more read covers every request made meanwhile. */
  queued: boolean;
}

/**
 * Upkeep of every `subscriptions/listen` task stream of one engine (issue 12 item 8): one event
 * subscription and one poll timer for all streams, and one store read per change of a watched
 * task, however many streams watch it (before: one subscription, one timer and one read per stream
 * per task, so 100 streams over the same tasks made 100 reads of each every 2 s). Also counts open
 * streams against `maxListenStreams` and `maxListenStreamsPerCaller`.
 */
export class ListenHub {
  readonly #engine: TaskEngine;
  readonly #slots: CallerSlots;
  readonly #watched = new Map<string, Watched>();
  readonly #byTask = new Map<string, Set<Watched>>();
  /** The entries each stream watches, so leaving costs its own watches, not every stream's. */
  readonly #ofStream = new WeakMap<ListenStream, Set<string>>();
  #unsubscribe: (() => void) | null = null;
  #poll: NodeJS.Timeout | null = null;

  constructor(engine: TaskEngine, limits: Pick<ServerLimits, 'maxListenStreams' | 'maxListenStreamsPerCaller'>) {
    this.#engine = engine;
    this.#slots = new CallerSlots({ total: limits.maxListenStreams, perCaller: limits.maxListenStreamsPerCaller });
  }

  /** Open streams (all callers), for tests and operators. */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * Admits one more stream of `owner`, or says which limit refuses it. An admitted stream MUST be
   * given back with `leave` when it ends.
   */
  admit(owner: string): { readonly ok: true } | SlotRefusal {
    return this.#slots.admit(owner);
  }

  /** Starts watching `taskIds` for an admitted stream and reads each once now. */
  watch(stream: ListenStream, taskIds: readonly string[]): void {
    for (const taskId of taskIds) {
      const key = `${stream.owner}\u0000${taskId}`;
      let entry = this.#watched.get(key);
      if (entry === undefined) {
        entry = { owner: stream.owner, taskId, streams: new Set(), chain: Promise.resolve(), queued: false };
        this.#watched.set(key, entry);
        const forTask = this.#byTask.get(taskId) ?? new Set();
        forTask.add(entry);
        this.#byTask.set(taskId, forTask);
      }
      entry.streams.add(stream);
      const keys = this.#ofStream.get(stream) ?? new Set<string>();
      keys.add(key);
      this.#ofStream.set(stream, keys);
      this.#read(entry);
    }
    this.#arm();
  }

  /** The stream ended: forgets its watches and gives its slot back. */
  leave(stream: ListenStream): void {
    for (const key of this.#ofStream.get(stream) ?? []) {
      const entry = this.#watched.get(key);
      if (entry === undefined || !entry.streams.delete(stream) || entry.streams.size > 0) continue;
      this.#watched.delete(key);
      const forTask = this.#byTask.get(entry.taskId);
      forTask?.delete(entry);
      if (forTask?.size === 0) this.#byTask.delete(entry.taskId);
    }
    this.#ofStream.delete(stream);
    this.#slots.release(stream.owner);
    if (this.#watched.size === 0) this.#disarm();
  }

  #arm(): void {
    if (this.#unsubscribe === null) {
      this.#unsubscribe = this.#engine.events.subscribe((event) => {
        for (const entry of this.#byTask.get(event.taskId) ?? []) {
          // A log line changes nothing a `DetailedTask` shows: only the streams that follow logs read.
          if (event.kind === 'log') this.#logs(entry);
          else this.#read(entry);
        }
      });
    }
    if (this.#poll === null) {
      this.#poll = setInterval(() => {
        this.#watched.forEach((entry) => {
          this.#read(entry);
          this.#logs(entry);
        });
      }, POLL_MS);
      this.#poll.unref();
    }
  }

  #disarm(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    if (this.#poll !== null) clearInterval(this.#poll);
    this.#poll = null;
  }

  #logs(entry: Watched): void {
    for (const stream of entry.streams) stream.logs?.(entry.taskId);
  }

  #read(entry: Watched): void {
    // Several events while a read runs need one more read, not one each.
    if (entry.queued) return;
    entry.queued = true;
    entry.chain = entry.chain
      .then(async () => {
        entry.queued = false;
        if (entry.streams.size === 0) return;
        const task = encodeDetailedTask(await this.#engine.get(entry.owner, entry.taskId));
        for (const stream of [...entry.streams]) stream.deliver(entry.taskId, task);
      })
      .catch(() => undefined); // expired or purged: nothing left to report
  }
}
