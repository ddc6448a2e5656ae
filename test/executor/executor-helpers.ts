/**
 * Test harness for the executor: a real `terminus` server in-process on 127.0.0.1:0 (engine + SDK
 * server + HTTP), a fault-injecting HTTP proxy in front of it, and a virtual clock for tests that
 * count requests per time window.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Clock, Ids, Random } from '../../src/core/ports.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer, type WireChoice } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { ExecutorOptions, Executor } from '../../src/executor/executor-types.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { defineTaskTool, type TaskToolDefinition } from '../../src/runner/tool.js';
import { ANONYMOUS_OWNER } from '../../src/server/owner.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createRev20251125Wire } from '../../src/server/wire/rev2025-11-25/index.js';
import { tasksExtensionWire } from '../../src/server/wire/tasks-ext/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import type { TaskRecord } from '../../src/core/task.js';
import { conformancePreflights, conformanceTools } from '../../src/tools/conformance/index.js';

/** Completes after `ms`; suggests a long poll interval so a test can act between completion and the next poll. */
export const quietTool = defineTaskTool({
  name: 'quiet_job',
  description: 'Completes after ms; polls rarely.',
  inputSchema: z.object({ ms: z.number(), label: z.string().optional() }),
  taskSupport: 'optional',
  pollIntervalMs: 3_000,
  handler: async ({ ms, label }, ctx) => {
    await sleep(ms, undefined, { signal: ctx.signal });
    return { content: [{ type: 'text', text: `${label ?? 'quiet'} done` }] };
  },
});

/** Runs until cancelled (or `ms`); suggests a 30 s poll interval, as a slow-moving server may (defect 7). */
export const patientTool = defineTaskTool({
  name: 'patient_job',
  description: 'Runs until cancelled; polls every 30 s.',
  inputSchema: z.object({ ms: z.number() }),
  taskSupport: 'optional',
  pollIntervalMs: 30_000,
  handler: async ({ ms }, ctx) => {
    await sleep(ms, undefined, { signal: ctx.signal });
    return { content: [{ type: 'text', text: 'patient done' }] };
  },
});

export interface TestServer {
  readonly url: string;
  readonly engine: TaskEngine;
  readonly store: TaskStore;
  /** Every task of the anonymous HTTP owner, newest first. */
  tasks(): Promise<TaskRecord[]>;
  /** Ids of the tasks the engine published `created` / `terminal` events for (any owner). */
  readonly created: Set<string>;
  readonly terminal: Set<string>;
  close(): Promise<void>;
}

/** `wires`: which server wires to enable (default the Tasks extension only, as `terminus serve`). */
export async function startServer(
  options: { wires?: 'ext' | 'legacy' | 'both'; store?: TaskStore } = {},
): Promise<TestServer> {
  const store = options.store ?? createMemoryTaskStore();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools keep their own Args types
  const tools: TaskToolDefinition<any>[] = [...conformanceTools, quietTool, patientTool];
  const engine = createEngine({
    store,
    tools,
    clock: systemClock,
    ids: systemIds,
    random: systemRandom,
    claimIntervalMs: 50,
  });
  engine.start();
  const created = new Set<string>();
  const terminal = new Set<string>();
  engine.events.subscribe((event) => {
    if (event.kind === 'created') created.add(event.taskId);
    if (event.kind === 'terminal') terminal.add(event.taskId);
  });
  const choice = options.wires ?? 'ext';
  const wires =
    choice === 'both'
      ? [tasksExtensionWire, createRev20251125Wire()]
      : choice === 'legacy'
        ? [createRev20251125Wire()]
        : [tasksExtensionWire];
  const server = createTerminusServer({ engine, wires, preflights: conformancePreflights });
  const http = await server.serveHttp({ port: 0 });
  return {
    url: http.url,
    engine,
    store,
    tasks: async () => (await engine.list(ANONYMOUS_OWNER, { limit: 1000 })).tasks,
    created,
    terminal,
    close: async () => {
      await http.close();
      await engine.stop();
      await store.close();
    },
  };
}

/** What the proxy does with one request: pass it on, answer it, or pass it on and drop the answer. */
export type ProxyAction =
  | { readonly kind: 'forward' }
  | { readonly kind: 'drop_response' }
  | { readonly kind: 'hold_response'; readonly release: Promise<void> }
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers?: Record<string, string>;
      readonly body?: string;
    };

export interface ProxyRequest {
  readonly method: string | undefined;
  readonly params: Record<string, unknown>;
  readonly at: number;
}

export interface Proxy {
  readonly url: string;
  /** Every JSON-RPC request that reached the proxy, in arrival order (wall-clock `at`). */
  readonly seen: ProxyRequest[];
  close(): Promise<void>;
}

/** An HTTP proxy on 127.0.0.1:0 in front of `upstream`; `decide` picks the fault per request. */
export async function startProxy(
  upstream: string,
  decide: (request: ProxyRequest) => ProxyAction,
  /** Sees (and may rewrite) each forwarded answer's body before the client gets it. */
  answered?: (request: ProxyRequest, body: string) => string,
): Promise<Proxy> {
  const seen: ProxyRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      let message: { method?: string; params?: Record<string, unknown> } = {};
      try {
        message = JSON.parse(body) as typeof message;
      } catch {
        // not JSON: forwarded as it is
      }
      const request: ProxyRequest = { method: message.method, params: message.params ?? {}, at: Date.now() };
      seen.push(request);
      const action = decide(request);
      if (action.kind === 'answer') {
        res.writeHead(action.status, action.headers ?? {});
        res.end(action.body ?? '');
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && k !== 'host' && k !== 'content-length' && k !== 'connection') headers[k] = v;
      }
      const answer = await fetch(upstream, { method: req.method ?? 'POST', headers, body });
      const received = await answer.text();
      const text = answered === undefined ? received : answered(request, received);
      if (action.kind === 'drop_response') {
        // The server did the work; the client never hears of it.
        res.destroy();
        return;
      }
      if (action.kind === 'hold_response') await action.release;
      const out: Record<string, string> = {};
      for (const name of ['content-type', 'mcp-session-id', 'retry-after']) {
        const value = answer.headers.get(name);
        if (value !== null) out[name] = value;
      }
      res.writeHead(answer.status, out);
      res.end(text);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** An executor on real time against `url` (HTTP), with a fast poll policy for tests. */
export async function openExecutor(
  url: string,
  overrides: Partial<ExecutorOptions> & { wire?: WireChoice; listen?: boolean } = {},
): Promise<{ executor: Executor; ledger: Ledger }> {
  const ledger = overrides.ledger ?? createMemoryLedger();
  const { wire, listen, ...rest } = overrides;
  const executor = await createExecutor({
    ledger,
    connect: (_server, forced) =>
      connectServer(
        { url },
        {
          clock: systemClock,
          wire: forced ?? wire ?? 'auto',
          timeoutMs: 10_000,
          ...(listen === undefined ? {} : { listen }),
        },
      ),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
    qps: 200,
    policy: { minPollIntervalMs: 50, backoffBaseMs: 50 },
    ...rest,
  });
  return { executor, ledger };
}

/** Polls `check` on real time until true; fails the test after `budgetMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, budgetMs = 15_000): Promise<void> {
  const until = Date.now() + budgetMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * A virtual clock: time moves only in `advance`, which fires due sleepers in time order and lets
 * the promise chains they start run (macrotask turns) before looking for the next one.
 */
export class VirtualClock implements Clock {
  private current: number;
  private timers: { at: number; seq: number; fire: () => void }[] = [];
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        return;
      }
      const onAbort = (): void => {
        this.timers = this.timers.filter((t) => t !== timer);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const timer = {
        at: this.current + Math.max(0, ms),
        seq: this.seq++,
        fire: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.timers.push(timer);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await settle();
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const due = this.timers[0];
      if (due === undefined || due.at > target) break;
      this.timers.shift();
      this.current = Math.max(this.current, due.at);
      due.fire();
    }
    this.current = target;
    await settle();
  }
}

/** A `Random` that always draws the middle: jitter is the same on every run. */
export const midRandom: Random = { next: () => 0.5 };

/** `Ids` counting up (`tid-1`, `op_2`, ...), so runs on a virtual clock repeat exactly. */
export function counterIds(): Ids {
  let n = 0;
  return { taskId: () => `tid-${++n}`, unique: (prefix) => `${prefix}_${++n}` };
}

/** Most of `times` in any window of `windowMs` that starts at one of them. */
export function busiest(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
