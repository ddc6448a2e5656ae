import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../core/ports.js';
import type { FromWorker, ToWorker } from './protocol.js';

/** How a worker process ended, in words, and whether one of its limits (heap, memory) ended it. */
export interface Death {
  readonly reason: string;
  readonly overLimit: boolean;
}

export interface SpawnOptions {
  /** `--max-old-space-size` of the process. */
  readonly heapMb: number;
  /** Nice value (0: leave it). */
  readonly nice: number;
  /** Where the process's stdout and stderr go, chunk by chunk. */
  readonly output: (chunk: string) => void;
  readonly clock: Clock;
}

/** Bytes of stderr kept to explain a death (V8's fatal message comes last, before its stack). */
const TAIL_BYTES = 8 * 1024;

/**
 * After an exit, how long the rest of its stderr may take to arrive (the pipe can trail the exit
 * event). Bounded: a process the worker started may hold the pipe open after the worker is gone.
 */
const STDERR_TRAIL_MS = 1000;

/** Process groups: a worker leads its own, so a kill takes the processes its handler started too. */
const GROUPS = process.platform !== 'win32';

/**
 * One worker process: `fork`ed with V8's heap limit and advanced (structured clone) serialisation,
 * its output handed on, and its end told in words. A process, not a thread: a thread's heap limit
 * is enforced by V8's near-heap-limit callback, which grants the thread 16 MB more and ends it;
 * one allocation larger than that (a 32 MB array, a big `JSON.parse`) aborts the whole process
 * instead (nodejs/node#47224). A process's own abort is only its own.
 */
export class WorkerProcess {
  readonly #child: ChildProcess;
  readonly #heapMb: number;
  /** Set when the pool kills the process, or by the `fatal` message it sent before exiting. */
  #death: Death | null = null;
  #tail = '';
  /** V8 began its fatal report (GC trace, native stack): the rest of stderr is kept, not handed on. */
  #dying = false;

  constructor(options: SpawnOptions, onMessage: (message: FromWorker) => void, onExit: (death: Death) => void) {
    this.#heapMb = options.heapMb;
    const fromSource = import.meta.url.endsWith('.ts');
    const entry = fileURLToPath(new URL(fromSource ? './entry.ts' : './entry.js', import.meta.url));
    this.#child = fork(entry, [], {
      // From the sources (vitest, tsx) the entry and the tools module are TypeScript: tsx's hook first.
      execArgv: [
        ...(fromSource ? ['--import', import.meta.resolve('tsx')] : []),
        `--max-old-space-size=${options.heapMb}`,
      ],
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // Its own process group (and session): a Ctrl-C in the terminal is the engine's to handle,
      // and a kill reaches what the handler started.
      detached: GROUPS,
    });
    const child = this.#child;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => options.output(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.#tail = (this.#tail + chunk).slice(-TAIL_BYTES);
      if (this.#dying) return;
      // V8's out-of-memory report is ~30 lines of GC trace and native stack: the run's end is
      // logged with its one line instead (the reason names the limit and quotes V8).
      const report = chunk.search(/<--- Last few GCs --->|FATAL ERROR:/);
      if (report >= 0) this.#dying = true;
      const shown = report >= 0 ? chunk.slice(0, report) : chunk;
      if (shown !== '') options.output(shown);
    });
    child.on('message', (message: FromWorker) => onMessage(message));
    // A failed spawn, or a send on a closed channel: the 'exit' that follows (or not) says the rest.
    child.on('error', (error) => {
      if (child.exitCode === null && child.signalCode === null && child.pid === undefined) {
        onExit({ reason: `the worker process could not start: ${error.message}`, overLimit: false });
      }
    });
    const trailing = new Promise<void>((resolve) => {
      if (child.stderr === null) resolve();
      else child.stderr.once('close', resolve).once('end', resolve);
    });
    child.on('exit', (code, signal) => {
      const gone = new AbortController();
      const waited = Promise.race([trailing, options.clock.sleep(STDERR_TRAIL_MS, gone.signal).catch(() => {})]);
      void waited.then(() => {
        gone.abort();
        onExit(this.#death ?? this.#describe(code, signal));
      });
    });
    if (options.nice > 0 && child.pid !== undefined) {
      try {
        setPriority(child.pid, options.nice);
      } catch {
        // Raising a nice value needs no privilege; a platform that refuses leaves it at 0.
      }
    }
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Sends `message`; false when the channel is closed (the process is gone or going). */
  send(message: ToWorker): boolean {
    if (!this.#child.connected) return false;
    this.#child.send(message, undefined, {}, () => {});
    return true;
  }

  /** Ends the process now (SIGKILL), with what it started, telling its run why. */
  kill(death: Death): void {
    this.#death ??= death;
    const pid = this.#child.pid;
    if (pid === undefined || this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    try {
      if (GROUPS) process.kill(-pid, 'SIGKILL');
      else this.#child.kill('SIGKILL');
    } catch {
      this.#child.kill('SIGKILL');
    }
  }

  /** The process sent its uncaught exception and is exiting with it. */
  fatal(reason: string): void {
    this.#death ??= { reason, overLimit: false };
  }

  #describe(code: number | null, signal: NodeJS.Signals | null): Death {
    const fatal = /FATAL ERROR: ([^\n]*)/.exec(this.#tail)?.[1];
    if (fatal !== undefined && /heap|allocation failed|out of memory/i.test(fatal)) {
      return {
        reason: `its JavaScript heap reached the worker limit of ${this.#heapMb} MB (workers.heapMb, --worker-heap-mb): V8 said "${fatal.trim()}"`,
        overLimit: true,
      };
    }
    if (fatal !== undefined) return { reason: `V8 ended it: ${fatal.trim()}`, overLimit: false };
    if (signal === 'SIGKILL') {
      return {
        reason: 'it was killed (SIGKILL) from outside: the kernel’s out-of-memory killer, or a person',
        overLimit: false,
      };
    }
    if (signal !== null) return { reason: `it ended on signal ${signal}`, overLimit: false };
    return { reason: `the worker process exited with code ${code}`, overLimit: false };
  }
}
