/**
 * A worker process's entry: imports the tools module, then runs one handler at a time with a
 * context whose methods are messages to the engine's process (see `protocol.ts`), and sends how it
 * settled. It is a program of its own, not a module to import: it ends itself (`process.exit`) when
 * the engine's process goes away, and an uncaught exception is sent before it exits.
 */
import { serialize } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { logLineBytes, type NewLogLine } from '../../core/log.js';
import type { Logger } from '../../core/ports.js';
import { Batcher } from '../batcher.js';
import { invokeHandler } from '../handlers.js';
import { handled, prepareLine } from '../task-log.js';
import type { TaskContext, TaskToolDefinition } from '../tool.js';
import {
  CONTEXT_CALLS,
  cloneable,
  decodeError,
  encodeError,
  LOCAL_CALLS,
  type ContextFields,
  type FromWorker,
  type Level,
  type LoggerEntry,
  type ToWorker,
  type WorkerCall,
  type WorkerData,
} from './protocol.js';

if (process.send === undefined) throw new Error('runner/workers/entry is a worker process entry, started by fork()');

/**
 * A thread of this process that kills it once its parent is gone (the parent was killed with -9):
 * this process's own event loop may be held by a handler that never yields, so it cannot notice.
 */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
setInterval(() => {
  if (process.ppid === workerData.ppid) return;
  try { process.kill(workerData.group ? -process.pid : process.pid, 'SIGKILL'); } catch { process.kill(process.pid, 'SIGKILL'); }
}, 500);`;
const watchdog = { ppid: process.ppid, group: process.platform !== 'win32' };
new Worker(WATCHDOG, { eval: true, workerData: watchdog, resourceLimits: { maxOldGenerationSizeMb: 8 } });

// Signals are for the engine's process, which ends its handlers itself (abort, grace, kill): a
// Ctrl-C reaches every process of the terminal's group, and must not kill a handler mid-write.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
// The engine's process closed the channel (it stopped, or died): nothing is left to serve.
process.on('disconnect', () => process.exit(0));

function post(message: FromWorker): void {
  // A channel closed under us: the engine is gone, and 'disconnect' ends this process.
  if (process.connected) process.send?.(message, undefined, {}, () => {});
}

process.on('uncaughtException', (error) => {
  // A handler's timer or promise that threw after it returned, or one that never awaited: the run
  // ends as crashed (the engine logs the reason) and the engine starts another process.
  if (!process.connected) process.exit(1);
  process.send?.({ type: 'fatal', error: encodeError(error) } satisfies FromWorker, undefined, {}, () =>
    process.exit(1),
  );
});

let data: WorkerData | null = null;

async function loadTools(loaded: WorkerData): Promise<Map<string, TaskToolDefinition>> {
  const module = (await import(loaded.module)) as Record<string, unknown>;
  let value = module[loaded.exportName];
  if (typeof value === 'function') value = await (value as (data: unknown) => unknown)(loaded.data);
  if (!Array.isArray(value)) {
    throw new Error(
      `${loaded.module} has no export ${loaded.exportName} that is an array of task tools or a function returning one`,
    );
  }
  const tools = new Map<string, TaskToolDefinition>();
  for (const tool of value as TaskToolDefinition[]) {
    if (typeof tool?.name === 'string' && typeof tool.handler === 'function') tools.set(tool.name, tool);
  }
  return tools;
}

const pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();
const aborts = new Map<number, AbortController>();
let nextCall = 0;

/** `bytes` of `what` over the limit: refused here, before it crosses (the engine's heap is shared by every task). */
function tooBig(what: string, bytes: number): Error {
  const limit = data?.maxMessageBytes ?? 0;
  return new Error(`${what} is ${bytes} bytes (v8-serialised), over the ${limit} bytes a worker may send`);
}

function call(run: number, method: WorkerCall, args: readonly unknown[]): Promise<unknown> {
  const id = nextCall++;
  return new Promise((resolve, reject) => {
    let size: number;
    try {
      // Structured clone (v8 serialisation) refuses a function or a class with private state.
      size = serialize(args).length;
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (size > (data?.maxMessageBytes ?? Infinity)) return reject(tooBig(`the ${method} argument`, size));
    pending.set(id, { resolve, reject });
    post({ type: 'call', run, id, method, args });
  });
}

/** `ctx.logger` lines, batched as the task log is: a handler logging in a loop sends one message per turn. */
function logger(run: number): { readonly logger: Logger; readonly batcher: Batcher<LoggerEntry> } {
  const batcher = new Batcher<LoggerEntry>(
    { maxItems: 1000, maxBytes: 1024 * 1024 },
    (entry) => entry.message.length + 64,
    async (entries, dropped) => void (await call(run, 'logger', [entries, dropped])),
  );
  const log =
    (level: Level) =>
    (message: string, fields?: Record<string, unknown>): void =>
      void batcher.push([
        {
          level,
          message: String(message),
          ...(fields === undefined ? {} : { fields: cloneable(fields) as Record<string, unknown> }),
        },
      ]);
  return {
    batcher,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
  };
}

interface RunContext {
  readonly ctx: TaskContext;
  /** Resolves once the lines and logger entries written so far have been sent and answered. */
  drain(): Promise<void>;
}

function context(run: number, fields: ContextFields, signal: AbortSignal, loaded: WorkerData): RunContext {
  const remote = Object.fromEntries(
    CONTEXT_CALLS.filter((name) => !(LOCAL_CALLS as readonly string[]).includes(name)).map((name) => [
      name,
      (...args: unknown[]) => handled(call(run, name as WorkerCall, args)),
    ]),
  );
  const limits = loaded.logLimits;
  const lines = new Batcher<NewLogLine>(
    { maxItems: limits.maxLines, maxBytes: limits.maxBytes },
    logLineBytes,
    async (batch, skipped) => void (await call(run, 'appendLog', [batch, skipped])),
  );
  const write = (stream: 'log' | 'output', text: unknown, extra?: unknown): Promise<void> => {
    try {
      return lines.push([prepareLine(stream, text, extra, limits)]);
    } catch (error) {
      return handled(Promise.reject(error as Error));
    }
  };
  const log = logger(run);
  const ctx = {
    ...fields,
    signal,
    logger: log.logger,
    ...remote,
    log: (text: unknown, extra?: unknown) => write('log', text, extra),
    output: (text: unknown) => write('output', text),
  } as unknown as TaskContext;
  return { ctx, drain: () => Promise.all([lines.drain(), log.batcher.drain()]).then(() => undefined) };
}

async function runOne(tools: Map<string, TaskToolDefinition>, message: Extract<ToWorker, { type: 'run' }>) {
  const { run } = message;
  const loaded = data!;
  const abort = new AbortController();
  aborts.set(run, abort);
  const tool = tools.get(message.tool);
  const running = context(run, message.fields, abort.signal, loaded);
  const settled =
    tool === undefined
      ? { ok: false as const, error: new Error(`tool ${message.tool} is not in this worker's module`) }
      : await invokeHandler(tool, message.args, running.ctx);
  // Lines written before the handler returned go before its outcome (a terminal task's log is final).
  await running.drain();
  aborts.delete(run);
  if (!settled.ok) return post({ type: 'settled', run, ok: false, error: encodeError(settled.error) });
  let payload: Uint8Array;
  try {
    payload = serialize(settled.value);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const failed = new Error(`the handler's result cannot leave its worker process (structured clone): ${reason}`);
    return post({ type: 'settled', run, ok: false, error: encodeError(failed) });
  }
  if (payload.length > loaded.maxMessageBytes) {
    return post({
      type: 'settled',
      run,
      ok: false,
      error: encodeError(tooBig("the handler's result", payload.length)),
    });
  }
  post({ type: 'settled', run, ok: true, payload });
}

function receive(tools: Map<string, TaskToolDefinition>, message: ToWorker): void {
  switch (message.type) {
    case 'load':
      return;
    case 'run':
      void runOne(tools, message);
      return;
    case 'abort':
      aborts.get(message.run)?.abort(decodeError(message.reason));
      return;
    case 'reply': {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) waiter?.resolve(message.value);
      else waiter?.reject(decodeError(message.error));
      return;
    }
  }
}

process.once('message', (first: ToWorker) => {
  if (first.type !== 'load') return post({ type: 'load_failed', error: encodeError(new Error('no load message')) });
  data = first.data;
  loadTools(first.data).then(
    (tools) => {
      process.on('message', (message: ToWorker) => receive(tools, message));
      post({ type: 'ready', tools: [...tools.keys()] });
    },
    (error: unknown) => post({ type: 'load_failed', error: encodeError(error) }),
  );
});
