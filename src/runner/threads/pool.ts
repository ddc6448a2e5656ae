import { Worker, type ResourceLimits } from 'node:worker_threads';
import { TerminusError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import type { HandlerHost, Invoked } from '../handlers.js';
import type { TaskContext, TaskToolDefinition } from '../tool.js';
import {
  CONTEXT_CALLS,
  type ContextCall,
  decodeError,
  encodeError,
  type FromThread,
  type ThreadData,
  type ToThread,
} from './protocol.js';

/**
 * Handlers in worker threads (`EngineOptions.workers`). A function cannot cross a thread, so each
 * thread imports `module` itself and finds each tool by name: the module MUST be importable on its
 * own (no state set up by the server's entry point) and define every tool the engine serves.
 */
export interface WorkerThreadsOptions {
  /** Threads; each runs one handler at a time, so a thread's crash takes only its own task. */
  readonly count: number;
  /** The module that defines the tools (`new URL('./tools.js', import.meta.url)` or a file URL string). */
  readonly module: URL | string;
  /**
   * Its export holding the tools: an array of task tools, or a function (maybe async) returning
   * one, called once per thread with `data`. Default `tools`.
   */
  readonly export?: string;
  /** Passed to that function (structured clone: plain data, no functions). */
  readonly data?: unknown;
  /** Per-thread V8 limits (`maxOldGenerationSizeMb`, ...): a thread over them dies, the node does not. */
  readonly resourceLimits?: ResourceLimits;
  /**
   * Linux only: the handler threads' nice value (0-19; higher yields the CPU sooner), so that on a
   * busy machine the serving thread is scheduled ahead of its own handlers. Ignored elsewhere
   * (there it would renice the whole process). Default 0.
   */
  readonly nice?: number;
}

interface Run {
  readonly id: number;
  readonly ctx: TaskContext;
  readonly done: (invoked: Invoked) => void;
}

interface Thread {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  run: Run | null;
  /** The uncaught error the thread died of, if it died of one (`error` comes before `exit`). */
  death: string | null;
}

/**
 * A pool of `count` worker threads running handlers. Everything a handler does through its context
 * is a message to this thread, where the store is (fenced writes stay here, S3); the handler's
 * signal is aborted by a message when the run's signal aborts. A thread that dies (an uncaught
 * throw, `process.exit`, out of memory) ends only its own run, as `crashed`, and is replaced.
 */
export class HandlerThreads implements HandlerHost {
  readonly #options: WorkerThreadsOptions;
  readonly #tools: readonly string[];
  readonly #logger: Logger;
  readonly #threads = new Set<Thread>();
  readonly #idle: Thread[] = [];
  readonly #waiting: ((thread: Thread | string) => void)[] = [];
  #nextRun = 0;
  #closing = false;

  constructor(options: WorkerThreadsOptions, tools: readonly string[], logger: Logger) {
    if (!Number.isInteger(options.count) || options.count < 1) {
      throw new RangeError(`workers.count must be a positive integer, got ${options.count}`);
    }
    const nice = options.nice ?? 0;
    if (!Number.isInteger(nice) || nice < 0 || nice > 19) {
      throw new RangeError(`workers.nice must be an integer from 0 to 19, got ${nice}`);
    }
    this.#options = options;
    this.#tools = tools;
    this.#logger = logger;
  }

  start(): Promise<void> {
    this.#closing = false;
    const threads = Array.from({ length: this.#options.count - this.#threads.size }, () => this.#spawn());
    return Promise.all(threads.map((t) => t.ready)).then(
      () => {
        for (const thread of threads) this.#release(thread);
        this.#logger.info('handler threads ready', {
          count: this.#options.count,
          module: String(this.#options.module),
        });
      },
      async (error: unknown) => {
        await this.close();
        throw error;
      },
    );
  }

  async invoke(tool: TaskToolDefinition, args: unknown, ctx: TaskContext): Promise<Invoked> {
    const thread = await this.#acquire();
    if (typeof thread === 'string') return { crashed: thread };
    const id = this.#nextRun++;
    const { taskId, attempt, epoch, lastCheckpoint } = ctx;
    const invoked = new Promise<Invoked>((done) => (thread.run = { id, ctx, done }));
    const onAbort = (): void => this.#post(thread, { type: 'abort', run: id, reason: encodeError(ctx.signal.reason) });
    this.#post(thread, {
      type: 'run',
      run: id,
      tool: tool.name,
      args,
      fields: { taskId, attempt, epoch, lastCheckpoint },
    });
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await invoked;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const waiter of this.#waiting.splice(0)) waiter('the handler threads are stopping');
    this.#idle.length = 0;
    await Promise.all([...this.#threads].map((thread) => thread.worker.terminate()));
  }

  #spawn(): Thread {
    const fromSource = import.meta.url.endsWith('.ts');
    const entry = new URL(fromSource ? './entry.ts' : './entry.js', import.meta.url);
    const workerData: ThreadData = {
      module: typeof this.#options.module === 'string' ? this.#options.module : this.#options.module.href,
      exportName: this.#options.export ?? 'tools',
      data: this.#options.data,
      ...(this.#options.nice === undefined ? {} : { nice: this.#options.nice }),
    };
    const options = {
      workerData,
      ...(this.#options.resourceLimits === undefined ? {} : { resourceLimits: this.#options.resourceLimits }),
    };
    // From sources (vitest, tsx) the entry and the tools module are TypeScript: tsx's hook first.
    const worker = fromSource
      ? new Worker(tsxBootstrap(entry), { ...options, eval: true })
      : new Worker(entry, options);
    let loaded: (error?: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      loaded = (error) => (error === undefined ? resolve() : reject(error));
    });
    ready.catch(() => {});
    const thread: Thread = { worker, ready, run: null, death: null };
    this.#threads.add(thread);
    worker.on('message', (message: FromThread) => this.#receive(thread, message, loaded));
    worker.on('error', (error) => {
      const code = (error as { code?: unknown }).code;
      thread.death = `${error.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${error.message}`;
    });
    worker.on('exit', (code) => {
      this.#threads.delete(thread);
      const idle = this.#idle.indexOf(thread);
      if (idle >= 0) this.#idle.splice(idle, 1);
      const reason = thread.death ?? `the worker thread exited with code ${code}`;
      loaded(new TerminusError('internal', `a handler thread could not load ${workerData.module}: ${reason}`));
      const run = thread.run;
      thread.run = null;
      if (run !== null) run.done({ crashed: reason });
      if (this.#closing) return;
      // A run's death is logged by its execution, with task id and epoch; an idle thread's here
      // (work a handler left behind, a timer, threw after it returned).
      if (run === null)
        this.#logger.error('an idle handler thread died; another starts when one is needed', { reason });
      if (this.#waiting.length > 0) void this.#replace();
    });
    return thread;
  }

  /** A new thread for the first waiter, or that thread's load failure as the waiter's crash. */
  async #replace(): Promise<void> {
    const thread = this.#spawn();
    try {
      await thread.ready;
      this.#release(thread);
    } catch (error) {
      this.#waiting.shift()?.(error instanceof Error ? error.message : String(error));
    }
  }

  #receive(thread: Thread, message: FromThread, loaded: (error?: Error) => void): void {
    switch (message.type) {
      case 'ready': {
        const missing = this.#tools.filter((name) => !message.tools.includes(name));
        if (missing.length === 0) return loaded();
        const has = message.tools.join(', ') || 'none';
        const module = String(this.#options.module);
        loaded(new TerminusError('invalid_argument', `${module} lacks tools ${missing.join(', ')} (it has ${has})`));
        void thread.worker.terminate();
        return;
      }
      case 'load_failed': {
        const error = decodeError(message.error);
        loaded(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      case 'call':
        void this.#call(thread, message);
        return;
      case 'log':
        if (thread.run?.id === message.run) thread.run.ctx.logger[message.level](message.message, message.fields);
        return;
      case 'settled': {
        const run = thread.run;
        if (run?.id !== message.run) return;
        thread.run = null;
        run.done(message.ok ? { ok: true, value: message.value } : { ok: false, error: decodeError(message.error) });
        this.#release(thread);
        return;
      }
    }
  }

  /** One context method, called on the run's real context here; its answer goes back by id. */
  async #call(thread: Thread, message: Extract<FromThread, { type: 'call' }>): Promise<void> {
    const run = thread.run;
    let reply: ToThread;
    try {
      if (run?.id !== message.run) throw new TerminusError('unavailable', 'the run that made this call has ended');
      if (!CONTEXT_CALLS.includes(message.method)) {
        throw new TerminusError('invalid_argument', `no context method ${String(message.method)}`);
      }
      const ctx = run.ctx as unknown as Record<ContextCall, (...args: unknown[]) => Promise<unknown>>;
      reply = { type: 'reply', id: message.id, ok: true, value: await ctx[message.method](...message.args) };
    } catch (error) {
      reply = { type: 'reply', id: message.id, ok: false, error: encodeError(error) };
    }
    this.#post(thread, reply);
  }

  #post(thread: Thread, message: ToThread): void {
    try {
      thread.worker.postMessage(message);
    } catch (error) {
      // A value structured clone refuses (a reply, an abort reason): the handler must still hear.
      if (message.type === 'reply') {
        const failed = encodeError(error);
        thread.worker.postMessage({ type: 'reply', id: message.id, ok: false, error: failed } satisfies ToThread);
      } else throw error;
    }
  }

  async #acquire(): Promise<Thread | string> {
    const idle = this.#idle.pop();
    if (idle !== undefined) return idle;
    if (this.#closing) return 'the handler threads are stopping';
    const waited = new Promise<Thread | string>((resolve) => this.#waiting.push(resolve));
    // Fewer threads than `count` (one died and was not replaced while nobody waited): start one.
    if (this.#threads.size < this.#options.count) void this.#replace();
    return waited;
  }

  #release(thread: Thread): void {
    if (!this.#threads.has(thread)) return;
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) waiter(thread);
    else this.#idle.push(thread);
  }
}

/** A CommonJS bootstrap that registers tsx's ESM hook inside the worker, then imports the entry. */
function tsxBootstrap(entry: URL): string {
  const api = import.meta.resolve('tsx/esm/api');
  return `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
}
