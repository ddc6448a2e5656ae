/**
 * Worker-thread entry: imports the tools module, then runs one handler at a time with a context
 * whose methods are messages to the main thread (see `protocol.ts`), and posts how it settled.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from '../../core/ports.js';
import { invokeHandler } from '../handlers.js';
import type { TaskContext, TaskToolDefinition } from '../tool.js';
import {
  CONTEXT_CALLS,
  cloneable,
  decodeError,
  encodeError,
  type ContextFields,
  type FromThread,
  type Level,
  type ThreadData,
  type ToThread,
} from './protocol.js';

const port = parentPort;
if (port === null) throw new Error('runner/threads/entry is a worker thread entry, not a module to import');
const post = (message: FromThread): void => port.postMessage(message);

async function loadTools(data: ThreadData): Promise<Map<string, TaskToolDefinition>> {
  const loaded = (await import(data.module)) as Record<string, unknown>;
  let value = loaded[data.exportName];
  if (typeof value === 'function') value = await (value as (data: unknown) => unknown)(data.data);
  if (!Array.isArray(value)) {
    throw new Error(
      `${data.module} has no export ${data.exportName} that is an array of task tools or a function returning one`,
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

function call(run: number, method: (typeof CONTEXT_CALLS)[number], args: readonly unknown[]): Promise<unknown> {
  const id = nextCall++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    try {
      post({ type: 'call', run, id, method, args });
    } catch (error) {
      // An argument structured clone cannot copy (a function, a class with private state).
      pending.delete(id);
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

function logger(run: number): Logger {
  const log =
    (level: Level) =>
    (message: string, fields?: Record<string, unknown>): void =>
      post({
        type: 'log',
        run,
        level,
        message,
        ...(fields === undefined ? {} : { fields: cloneable(fields) as Record<string, unknown> }),
      });
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

function context(run: number, fields: ContextFields, signal: AbortSignal): TaskContext {
  const methods = Object.fromEntries(
    CONTEXT_CALLS.map((name) => [name, (...args: unknown[]) => call(run, name, args)]),
  );
  return { ...fields, signal, logger: logger(run), ...methods } as unknown as TaskContext;
}

async function runOne(tools: Map<string, TaskToolDefinition>, message: Extract<ToThread, { type: 'run' }>) {
  const { run } = message;
  const abort = new AbortController();
  aborts.set(run, abort);
  const tool = tools.get(message.tool);
  const settled =
    tool === undefined
      ? { ok: false as const, error: new Error(`tool ${message.tool} is not in this worker thread's module`) }
      : await invokeHandler(tool, message.args, context(run, message.fields, abort.signal));
  aborts.delete(run);
  if (settled.ok) {
    try {
      post({ type: 'settled', run, ok: true, value: settled.value });
      return;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const failed = new Error(`the handler's result cannot leave its worker thread (structured clone): ${reason}`);
      post({ type: 'settled', run, ok: false, error: encodeError(failed) });
      return;
    }
  }
  post({ type: 'settled', run, ok: false, error: encodeError(settled.error) });
}

function receive(tools: Map<string, TaskToolDefinition>, message: ToThread): void {
  switch (message.type) {
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

const data = workerData as ThreadData;
// Only on Linux, where setpriority(PRIO_PROCESS, 0) renices the calling thread alone; elsewhere it
// would renice the whole process, serving thread included.
if (data.nice !== undefined && data.nice !== 0 && process.platform === 'linux') setPriority(data.nice);

try {
  const tools = await loadTools(data);
  port.on('message', (message: ToThread) => receive(tools, message));
  post({ type: 'ready', tools: [...tools.keys()] });
} catch (error) {
  post({ type: 'load_failed', error: encodeError(error) });
}
