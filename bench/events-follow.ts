/**
 * Requests the executor makes to follow one task of N seconds against a real terminus server
 * (SQLite, HTTP on 127.0.0.1:0, the Tasks extension), counted at a proxy in front of it: with
 * status reads (the executor's wire without `events`, as against a server that serves none), with
 * the task's ordered events, and with events when one events answer is lost (a broken stream).
 * Counts only, no timings: the ratio is what the issue asks for.
 *
 *   npx tsx bench/events-follow.ts [--seconds 10] [--interval-ms 1000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { systemClock, systemIds, systemRandom } from '../src/core/system.js';
import { connectServer } from '../src/executor/adapters/index.js';
import { createExecutor } from '../src/executor/executor.js';
import { createMemoryLedger } from '../src/executor/ledger/memory.js';
import { createEngine } from '../src/runner/engine.js';
import { defineTaskTool } from '../src/runner/tool.js';
import { createTerminusServer } from '../src/server/terminus-server.js';
import { tasksExtensionWire } from '../src/server/wire/tasks-ext/index.js';
import { openSqliteTaskStore } from '../src/store/sqlite/open.js';

export type FollowMode = 'status' | 'events' | 'events+break';

export interface FollowCount {
  readonly mode: FollowMode;
  readonly status: string;
  /** Requests by JSON-RPC method, as the server saw them. */
  readonly methods: Readonly<Record<string, number>>;
  /** Reads while the task ran and for its result: `tasks/get` plus `terminus/tasks/events`. */
  readonly reads: number;
}

const EVENTS = 'terminus/tasks/events';

/** Runs `seconds`, reporting progress every `stepMs`; suggests `intervalMs` between polls. */
function timedTool(intervalMs: number) {
  return defineTaskTool({
    name: 'timed_job',
    description: 'Runs for ms, reporting progress.',
    inputSchema: z.object({ ms: z.number(), stepMs: z.number() }),
    taskSupport: 'required',
    pollIntervalMs: intervalMs,
    handler: async ({ ms, stepMs }, ctx) => {
      const steps = Math.max(1, Math.round(ms / stepMs));
      for (let i = 1; i <= steps; i++) {
        await sleep(ms / steps, undefined, { signal: ctx.signal });
        await ctx.progress(i, steps);
      }
      return { content: [{ type: 'text', text: 'done' }] };
    },
  });
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A proxy on 127.0.0.1:0 that counts JSON-RPC methods and can drop the answer of the n-th events read. */
async function countingProxy(upstream: string, dropEventsRead: number | null) {
  const methods: Record<string, number> = {};
  let eventsReads = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      let method = 'other';
      try {
        method = (JSON.parse(text) as { method?: string }).method ?? 'other';
      } catch {
        // not JSON
      }
      methods[method] = (methods[method] ?? 0) + 1;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
      }
      const answer = await fetch(upstream, { method: req.method ?? 'POST', headers, body: text });
      const out = await answer.text();
      if (method === EVENTS && ++eventsReads === dropEventsRead) {
        res.destroy(); // the stream breaks: the server served the page, the client never hears it
        return;
      }
      const back: Record<string, string> = {};
      for (const name of ['content-type', 'mcp-session-id', 'retry-after']) {
        const value = answer.headers.get(name);
        if (value !== null) back[name] = value;
      }
      res.writeHead(answer.status, back);
      res.end(out);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    methods,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One task of `seconds` followed in each mode against a fresh server; the requests each made. */
export async function followCounts(options: { seconds: number; intervalMs: number }): Promise<FollowCount[]> {
  const dir = mkdtempSync(join(tmpdir(), 'terminus-events-follow-'));
  const store = await openSqliteTaskStore({ path: join(dir, 'server.db') });
  const engine = createEngine({
    store,
    tools: [timedTool(options.intervalMs)],
    clock: systemClock,
    ids: systemIds,
    random: systemRandom,
    claimIntervalMs: 50,
    // A fixed interval: the adaptive one learns from the first mode's run and would favour the later ones.
    maxPollIntervalMs: 0,
  });
  engine.start();
  const http = await createTerminusServer({ engine, wires: [tasksExtensionWire] }).serveHttp({ port: 0 });
  const counts: FollowCount[] = [];
  try {
    for (const mode of ['status', 'events', 'events+break'] as const) {
      const proxy = await countingProxy(http.url, mode === 'events+break' ? 2 : null);
      const executor = await createExecutor({
        ledger: createMemoryLedger(),
        connect: (_server, forced) =>
          connectServer(
            { url: proxy.url },
            { clock: systemClock, wire: forced ?? 'mcp-tasks-ext', listen: false, timeoutMs: 5_000 },
          ),
        // Status reads: as against a server that serves no events.
        followEvents: mode !== 'status',
        clock: systemClock,
        random: systemRandom,
        ids: systemIds,
        policy: { backoffBaseMs: 200 },
      });
      try {
        const op = await executor.submit({
          callNodeId: `follow-${mode}`,
          server: 'bench',
          tool: 'timed_job',
          args: { ms: options.seconds * 1000, stepMs: 250 },
        });
        const receipt = await op.result();
        const methods = { ...proxy.methods };
        counts.push({
          mode,
          status: receipt.status,
          methods,
          reads: (methods['tasks/get'] ?? 0) + (methods[EVENTS] ?? 0),
        });
      } finally {
        await executor.close();
        await proxy.close();
      }
    }
  } finally {
    await http.close();
    await engine.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return counts;
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seconds = flag('--seconds', 10);
  const intervalMs = flag('--interval-ms', 1000);
  const counts = await followCounts({ seconds, intervalMs });
  const base = counts.find((c) => c.mode === 'status')!;
  console.log(
    `one task of ${seconds} s, server poll interval ${intervalMs} ms; load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log('mode          status     tasks/get  events reads  all requests  reads vs status reads');
  for (const c of counts) {
    const all = Object.values(c.methods).reduce((a, b) => a + b, 0);
    console.log(
      `${c.mode.padEnd(13)} ${c.status.padEnd(10)} ${String(c.methods['tasks/get'] ?? 0).padStart(9)} ${String(c.methods[EVENTS] ?? 0).padStart(13)} ${String(all).padStart(13)}  ${(c.reads / base.reads).toFixed(2)}x`,
    );
  }
}
