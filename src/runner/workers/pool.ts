import { deserialize } from 'node:v8';
import { TerminusError } from '../../core/errors.js';
import type { Clock, Logger } from '../../core/ports.js';
import type { HandlerHost, HostedRun, Invoked } from '../handlers.js';
import type { LogLimits } from '../task-log.js';
import type { TaskContext, TaskToolDefinition } from '../tool.js';
import { CAN_READ_MEMORY, defaultWorkerHeapMb, defaultWorkerMemoryMb, residentBytes } from './limits.js';
import { WorkerProcess, type Death } from './process.js';
import {
  CONTEXT_CALLS,
  decodeError,
  encodeError,
  LOCAL_CALLS,
  type AppendLogArgs,
  type FromWorker,
  type Level,
  type LoggerArgs,
  type ToWorker,
  type WorkerCall,
  type WorkerData,
} from './protocol.js';

/**
 * Handlers in worker processes (`EngineOptions.workers`). A function cannot cross a process, so
 * each worker imports `module` itself and finds each tool by name: the module MUST be importable
 * on its own (no state set up by the server's entry point) and define every tool the engine serves.
 */
export interface WorkersOptions {
  /** Worker processes; each runs one handler at a time, so a worker's death takes only its own task. */
  readonly count: number;
  /** The module that defines the tools (`new URL('./tools.js', import.meta.url)` or a file URL string). */
  readonly module: URL | string;
  /**
   * Its export holding the tools: an array of task tools, or a function (maybe async) returning
   * one, called once per worker with `data`. Default `tools`.
   */
  readonly export?: string;
  /** Passed to that function (structured clone: plain data, no functions). */
  readonly data?: unknown;
  /**
   * JS heap limit of each worker, in MB (V8's `--max-old-space-size`). A handler past it ends its
   * worker; its task fails with a reason naming this limit. Default: sized to the machine
   * (`defaultWorkerHeapMb`: a quarter of its memory shared by `count`, 256..2048).
   */
  readonly heapMb?: number;
  /**
   * Resident memory limit of each worker, in MB (Linux): it counts what the heap limit does not
   * (Buffers, ArrayBuffers, native memory). A worker found over it is killed and its task fails,
   * naming this limit. Checked every 250 ms. Default: twice `heapMb`, at least `heapMb` + 256.
   */
  readonly memoryMb?: number;
  /**
   * Largest result, or argument of a context call, a worker sends (v8-serialised bytes): larger
   * is refused in the worker (the task ends with a tool error saying so), so one task cannot make
   * the engine's process hold an unbounded copy. Default 64 MiB.
   */
  readonly maxMessageBytes?: number;
  /**
   * Nice value of the worker processes (0-19; higher yields the CPU sooner), so that on a busy
   * machine the serving process is scheduled ahead of its own handlers. Default 0.
   */
  readonly nice?: number;
  /**
   * Where the workers' stdout and stderr go, chunk by chunk (a handler's `console.log`). Default:
   * the engine's logger, one `info` entry per chunk. The CLI passes its own stderr.
   */
  readonly output?: (chunk: string) => void;
}

const LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'] satisfies Level[];

/** The workers' resident memory is read this often (a `/proc` read per worker). */
const MEMORY_CHECK_MS = 250;

interface Run {
  readonly id: number;
  readonly ctx: TaskContext;
  readonly hosted: HostedRun;
  readonly done: (invoked: Invoked) => void;
}

interface Worker {
  readonly process: WorkerProcess;
  readonly ready: Promise<void>;
  /** Resolves once the process has exited. */
  readonly gone: Promise<void>;
  run: Run | null;
}

/**
 * A pool of `count` worker processes running handlers. Everything a handler does through its
 * context is a message to this process, where the store is (fenced writes stay here, S3); the
 * handler's signal is aborted by a message when the run's signal aborts. A worker that dies (an
 * uncaught throw, `process.exit`, a limit) ends only its own run, and is replaced; a run whose
 * `kill` signal aborts (the grace after its abort ran out) is ended by killing its worker.
 */
export class HandlerWorkers implements HandlerHost {
  readonly #options: WorkersOptions;
  readonly #tools: readonly string[];
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #data: WorkerData;
  readonly #heapMb: number;
  readonly #memoryMb: number;
  readonly #workers = new Set<Worker>();
  readonly #idle: Worker[] = [];
  readonly #waiting: ((worker: Worker | string) => void)[] = [];
  #nextRun = 0;
  #closing = false;
  #watch: AbortController | null = null;

  constructor(
    options: WorkersOptions,
    deps: {
      readonly tools: readonly string[];
      readonly logger: Logger;
      readonly clock: Clock;
      readonly logLimits: LogLimits;
    },
  ) {
    if (!Number.isInteger(options.count) || options.count < 1) {
      throw new RangeError(`workers.count must be a positive integer, got ${options.count}`);
    }
    const nice = options.nice ?? 0;
    if (!Number.isInteger(nice) || nice < 0 || nice > 19) {
      throw new RangeError(`workers.nice must be an integer from 0 to 19, got ${nice}`);
    }
    this.#heapMb = whole('workers.heapMb', options.heapMb ?? defaultWorkerHeapMb(options.count), 16);
    this.#memoryMb = whole('workers.memoryMb', options.memoryMb ?? defaultWorkerMemoryMb(this.#heapMb), 32);
    this.#options = options;
    this.#tools = deps.tools;
    this.#logger = deps.logger;
    this.#clock = deps.clock;
    this.#data = {
      module: typeof options.module === 'string' ? options.module : options.module.href,
      exportName: options.export ?? 'tools',
      data: options.data,
      logLimits: deps.logLimits,
      maxMessageBytes: whole('workers.maxMessageBytes', options.maxMessageBytes ?? 64 * 1024 * 1024, 1024),
    };
  }

  start(): Promise<void> {
    this.#closing = false;
    const workers = Array.from({ length: this.#options.count - this.#workers.size }, () => this.#spawn());
    return Promise.all(workers.map((w) => w.ready)).then(
      () => {
        for (const worker of workers) this.#release(worker);
        this.#watchMemory();
        this.#logger.info('handler workers ready', {
          count: this.#options.count,
          module: this.#data.module,
          heapMb: this.#heapMb,
          ...(CAN_READ_MEMORY ? { memoryMb: this.#memoryMb } : {}),
        });
      },
      async (error: unknown) => {
        await this.close();
        throw error;
      },
    );
  }

  async invoke(tool: TaskToolDefinition, args: unknown, ctx: TaskContext, hosted: HostedRun): Promise<Invoked> {
    const worker = await this.#acquire();
    if (typeof worker === 'string') return { crashed: worker, overLimit: false };
    const id = this.#nextRun++;
    const { taskId, attempt, epoch, lastCheckpoint } = ctx;
    const invoked = new Promise<Invoked>((done) => (worker.run = { id, ctx, hosted, done }));
    const onAbort = (): void =>
      void worker.process.send({ type: 'abort', run: id, reason: encodeError(ctx.signal.reason) });
    const onKill = (): void => {
      const reason: unknown = hosted.kill.reason;
      worker.process.kill({ reason: reason instanceof Error ? reason.message : String(reason), overLimit: false });
    };
    const fields = { taskId, attempt, epoch, lastCheckpoint };
    worker.process.send({ type: 'run', run: id, tool: tool.name, args, fields });
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (hosted.kill.aborted) onKill();
    else hosted.kill.addEventListener('abort', onKill, { once: true });
    try {
      return await invoked;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      hosted.kill.removeEventListener('abort', onKill);
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#watch?.abort();
    this.#watch = null;
    for (const waiter of this.#waiting.splice(0)) waiter('the handler workers are stopping');
    this.#idle.length = 0;
    const workers = [...this.#workers];
    for (const worker of workers) worker.process.kill({ reason: 'the handler workers stopped', overLimit: false });
    await Promise.all(workers.map((worker) => worker.gone));
  }

  #spawn(): Worker {
    let loaded: (error?: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      loaded = (error) => (error === undefined ? resolve() : reject(error));
    });
    ready.catch(() => {});
    let exited: () => void = () => undefined;
    const gone = new Promise<void>((resolve) => (exited = resolve));
    const output = this.#options.output ?? ((text: string) => this.#logger.info('handler worker output', { text }));
    // The callbacks run later (a message, an exit), once `worker` below exists.
    const process: WorkerProcess = new WorkerProcess(
      { heapMb: this.#heapMb, nice: this.#options.nice ?? 0, output, clock: this.#clock },
      (message) => this.#receive(worker, message, loaded),
      (death) => {
        exited();
        this.#exited(worker, death, loaded);
      },
    );
    const worker: Worker = { process, ready, gone, run: null };
    this.#workers.add(worker);
    process.send({ type: 'load', data: this.#data });
    return worker;
  }

  #exited(worker: Worker, death: Death, loaded: (error?: Error) => void): void {
    this.#workers.delete(worker);
    const idle = this.#idle.indexOf(worker);
    if (idle >= 0) this.#idle.splice(idle, 1);
    loaded(new TerminusError('internal', `a handler worker could not load ${this.#data.module}: ${death.reason}`));
    const run = worker.run;
    worker.run = null;
    if (run !== null) run.done({ crashed: death.reason, overLimit: death.overLimit });
    if (this.#closing) return;
    // A run's death is logged by its execution, with task id and epoch; an idle worker's here
    // (work a handler left behind, a timer, threw after it returned).
    if (run === null) {
      this.#logger.error('an idle handler worker died; another starts when one is needed', { reason: death.reason });
    }
    if (this.#waiting.length > 0) void this.#replace();
  }

  /** A new worker for the first waiter, or that worker's load failure as the waiter's crash. */
  async #replace(): Promise<void> {
    const worker = this.#spawn();
    try {
      await worker.ready;
      this.#release(worker);
    } catch (error) {
      this.#waiting.shift()?.(error instanceof Error ? error.message : String(error));
    }
  }

  #receive(worker: Worker, message: FromWorker, loaded: (error?: Error) => void): void {
    switch (message.type) {
      case 'ready': {
        const missing = this.#tools.filter((name) => !message.tools.includes(name));
        if (missing.length === 0) return loaded();
        const has = message.tools.join(', ') || 'none';
        const module = this.#data.module;
        loaded(new TerminusError('invalid_argument', `${module} lacks tools ${missing.join(', ')} (it has ${has})`));
        worker.process.kill({ reason: 'its module lacks tools', overLimit: false });
        return;
      }
      case 'load_failed': {
        const error = decodeError(message.error);
        loaded(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      case 'fatal': {
        const error = decodeError(message.error);
        const code = (error as { code?: unknown }).code;
        const name = error instanceof Error ? error.name : 'thrown';
        const text = error instanceof Error ? error.message : JSON.stringify(error);
        worker.process.fatal(`uncaught ${name}${typeof code === 'string' ? ` [${code}]` : ''}: ${text}`);
        return;
      }
      case 'call':
        void this.#call(worker, message);
        return;
      case 'settled': {
        const run = worker.run;
        if (run?.id !== message.run) return;
        worker.run = null;
        run.done(settledOf(message));
        this.#release(worker);
        return;
      }
    }
  }

  /** One call of a worker, made on the run's real context here; its answer goes back by id. */
  async #call(worker: Worker, message: Extract<FromWorker, { type: 'call' }>): Promise<void> {
    const run = worker.run;
    let reply: ToWorker;
    try {
      if (run?.id !== message.run) throw new TerminusError('unavailable', 'the run that made this call has ended');
      reply = {
        type: 'reply',
        id: message.id,
        ok: true,
        value: await this.#perform(run, message.method, message.args),
      };
    } catch (error) {
      reply = { type: 'reply', id: message.id, ok: false, error: encodeError(error) };
    }
    try {
      worker.process.send(reply);
    } catch (error) {
      // A value structured clone refuses: the handler must still hear.
      worker.process.send({ type: 'reply', id: message.id, ok: false, error: encodeError(error) });
    }
  }

  async #perform(run: Run, method: WorkerCall, args: readonly unknown[]): Promise<unknown> {
    if (method === 'appendLog') {
      const [lines, skipped] = args as AppendLogArgs;
      return run.hosted.writeLog(lines, skipped);
    }
    if (method === 'logger') {
      const [entries, dropped] = args as LoggerArgs;
      for (const entry of entries) {
        const level = LEVELS.includes(entry.level) ? entry.level : 'info';
        run.ctx.logger[level](String(entry.message), entry.fields);
      }
      if (dropped > 0)
        run.ctx.logger.warn('handler logger lines dropped: written faster than they were logged', { dropped });
      return undefined;
    }
    const remote = CONTEXT_CALLS.filter((name) => !(LOCAL_CALLS as readonly string[]).includes(name));
    if (!(remote as readonly string[]).includes(method)) {
      throw new TerminusError('invalid_argument', `no context method ${String(method)}`);
    }
    const ctx = run.ctx as unknown as Record<WorkerCall, (...a: unknown[]) => Promise<unknown>>;
    return ctx[method](...args);
  }

  async #acquire(): Promise<Worker | string> {
    const idle = this.#idle.pop();
    if (idle !== undefined) return idle;
    if (this.#closing) return 'the handler workers are stopping';
    const waited = new Promise<Worker | string>((resolve) => this.#waiting.push(resolve));
    // Fewer workers than `count` (one died and was not replaced while nobody waited): start one.
    if (this.#workers.size < this.#options.count) void this.#replace();
    return waited;
  }

  #release(worker: Worker): void {
    if (!this.#workers.has(worker)) return;
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) waiter(worker);
    else this.#idle.push(worker);
  }

  /**
   * Linux: every `MEMORY_CHECK_MS`, kills a worker whose resident memory is over `memoryMb` (what
   * the heap limit does not see: Buffers, ArrayBuffers, native allocations).
   */
  #watchMemory(): void {
    if (!CAN_READ_MEMORY || this.#watch !== null) return;
    const watch = new AbortController();
    this.#watch = watch;
    const limit = this.#memoryMb * 1024 * 1024;
    void (async () => {
      while (!watch.signal.aborted) {
        try {
          await this.#clock.sleep(MEMORY_CHECK_MS, watch.signal);
        } catch {
          return;
        }
        for (const worker of [...this.#workers]) {
          const pid = worker.process.pid;
          const bytes = pid === undefined ? null : await residentBytes(pid);
          if (bytes === null || bytes <= limit) continue;
          const mb = Math.round(bytes / (1024 * 1024));
          worker.process.kill({
            reason: `its resident memory reached ${mb} MB, over the worker limit of ${this.#memoryMb} MB (workers.memoryMb, --worker-memory-mb)`,
            overLimit: true,
          });
        }
      }
    })();
  }
}

function settledOf(message: Extract<FromWorker, { type: 'settled' }>): Invoked {
  if (!message.ok) return { ok: false, error: decodeError(message.error) };
  try {
    return { ok: true, value: deserialize(message.payload) as unknown };
  } catch (error) {
    return { ok: false, error };
  }
}

function whole(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`${name} must be an integer of at least ${min}, got ${value}`);
  }
  return value;
}
