/**
 * `npx tsx bench/sdk-costs.ts [--ops 2000] [--repeats 7]`: what the SDK itself costs per exchange
 * (issue 14 item 6), in process, no sockets. One `tasks/get` of a working task on a memory store,
 * measured as CPU time (`process.cpuUsage`, user + system) per operation, median of `--repeats`:
 * CPU time is what a loaded machine distorts least (wall time counts the other processes' turns).
 *
 * - the whole SDK exchange as `serveHttp` drives it (web `Request` in, `createMcpHandler.fetch`
 *   with `parsedBody`, `Response` out and read), and the same answer from the fast path;
 * - its parts: the web `Request`/`Response` bridging, an `AbortController` aborted with the
 *   default reason (a `DOMException`), the SDK's era classifier (zod type guards, two of which fail
 *   on every request, plus the envelope schema), single zod guards, a fresh SDK `Server` with our
 *   methods installed, and the engine's own read (the real work).
 *
 * Printed: microseconds per operation and each part as a share of the SDK exchange, with the load
 * average; docs/benchmarks.md reads what an upstream fix would buy from these.
 */
import type { IncomingMessage } from 'node:http';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import {
  classifyInboundRequest,
  createMcpHandler,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
} from '@modelcontextprotocol/server';
import { silentLogger } from '../src/core/ports.js';
import { systemClock, systemIds } from '../src/core/system.js';
import { createEngine } from '../src/runner/engine.js';
import { defineTaskTool } from '../src/runner/tool.js';
import { fastAnswer } from '../src/server/http/fast-path.js';
import { createTerminusServer } from '../src/server/terminus-server.js';
import { createWireRegistry } from '../src/server/wire/registry.js';
import { taskFastMethods } from '../src/server/wire/tasks-ext/methods.js';
import { createMemoryTaskStore } from '../src/store/memory/index.js';
import { z } from 'zod';

const { values } = parseArgs({
  options: { ops: { type: 'string', default: '2000' }, repeats: { type: 'string', default: '7' } },
});
const OPS = Number(values.ops);
const REPEATS = Number(values.repeats);
const PROTOCOL = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const AUTH = { token: 'bench', clientId: 'bench', scopes: [] };

/** Median CPU microseconds per call of `op`, over `REPEATS` runs of `OPS` calls (after a warm-up run). */
async function cpuPerOp(op: () => unknown): Promise<number> {
  const run = async (): Promise<number> => {
    const start = process.cpuUsage();
    for (let i = 0; i < OPS; i += 1) await op();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / OPS;
  };
  await run();
  const runs: number[] = [];
  for (let r = 0; r < REPEATS; r += 1) runs.push(await run());
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)]!;
}

async function main(): Promise<void> {
  const loadStart = loadavg();
  const store = createMemoryTaskStore();
  const sleepTool = defineTaskTool({
    name: 'bench_sleep',
    description: 'Waits.',
    inputSchema: z.object({ ms: z.number() }),
    taskSupport: 'optional',
    handler: async ({ ms }, ctx) => {
      await new Promise((resolve) => setTimeout(resolve, ms).unref());
      void ctx;
      return { content: [] };
    },
  });
  const engine = createEngine({ store, tools: [sleepTool], clock: systemClock, ids: systemIds });
  engine.start();
  const registry = createWireRegistry({ limits: { createsPerMinute: 0, pollsPerMinute: 0 } });
  const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters, name: 'bench' });
  const factory = server.factory('http');
  const mcp = createMcpHandler(factory, { legacy: 'reject' });
  const created = await engine.submit({
    owner: 'auth:bench',
    tool: 'bench_sleep',
    args: { ms: 3_600_000 },
    wire: 'mcp-tasks-ext',
  });
  const taskId = created.task.id;
  // The runner's claim moves it to working; the answers below must all read `working`.
  await new Promise((resolve) => setTimeout(resolve, 500));

  const message = {
    jsonrpc: '2.0',
    id: 7,
    method: 'tasks/get',
    params: {
      taskId,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL,
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
      },
    },
  };
  const body = JSON.stringify(message);
  const headers: Record<string, string> = {
    host: '127.0.0.1:3000',
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL,
    'mcp-method': 'tasks/get',
    'mcp-name': taskId,
    authorization: 'Bearer bench',
  };
  const nodeReq = { method: 'POST', headers } as unknown as IncomingMessage;
  const methods = taskFastMethods({
    engine: registry.guard(engine),
    transport: 'http',
    preflights: new Map(),
    logger: silentLogger,
  });
  const newRequest = (): Request =>
    new Request('http://127.0.0.1:3000/mcp', {
      method: 'POST',
      headers,
      body: Buffer.from(body),
      signal: new AbortController().signal,
    });

  const check = await (await mcp.fetch(newRequest(), { authInfo: AUTH, parsedBody: JSON.parse(body) })).text();
  if (!check.includes('"status":"working"')) throw new Error(`SDK answer: ${check}`);
  const checkFast = await fastAnswer(nodeReq, JSON.parse(body), methods, { name: 'bench', version: '0.1.0' }, AUTH);
  if (checkFast === undefined || checkFast.body !== check) throw new Error(`fast answer differs: ${checkFast?.body}`);

  const headerInput = {
    httpMethod: 'POST',
    protocolVersionHeader: PROTOCOL,
    mcpMethodHeader: 'tasks/get',
    mcpNameHeader: taskId,
  };
  const rows: [string, number][] = [];
  const measure = async (label: string, op: () => unknown): Promise<void> => {
    rows.push([label, await cpuPerOp(op)]);
  };
  await measure('SDK exchange: Request -> createMcpHandler.fetch -> Response read', async () => {
    const response = await mcp.fetch(newRequest(), { authInfo: AUTH, parsedBody: JSON.parse(body) });
    await response.text();
  });
  await measure('fast path: fastAnswer (same answer, no SDK)', () =>
    fastAnswer(nodeReq, JSON.parse(body), methods, { name: 'bench', version: '0.1.0' }, AUTH),
  );
  await measure('engine.get alone (memory store)', () => engine.get('auth:bench', taskId));
  await measure('web bridging: new Request + new Response + arrayBuffer()', async () => {
    newRequest();
    await new Response(check, { status: 200, headers: { 'content-type': 'application/json' } }).arrayBuffer();
  });
  await measure('AbortController + abort() (DOMException reason)', () => new AbortController().abort());
  await measure('AbortController, never aborted', () => new AbortController());
  await measure('SDK classifier: classifyInboundRequest (zod guards + envelope schema)', () =>
    classifyInboundRequest({ ...headerInput, body: message }),
  );
  await measure('zod guard that passes: isJSONRPCRequest', () => isJSONRPCRequest(message));
  await measure('zod guards that fail: isJSONRPCResultResponse + isJSONRPCErrorResponse', () => {
    isJSONRPCResultResponse(message);
    isJSONRPCErrorResponse(message);
  });
  const requestInfo = newRequest();
  await measure('a fresh SDK Server with every wire installed (factory)', () =>
    factory({ era: 'modern', requestInfo } as never),
  );
  // No engine.stop(): it would wait for the 1 h handler; process.exit ends it with the process.

  const sdk = rows[0]![1];
  const fmt = (n: number, d = 1): string => n.toLocaleString('en-US', { maximumFractionDigits: d });
  const out = [
    `SDK cost per tasks/get exchange, CPU us/op (median of ${REPEATS} x ${OPS}), load average ${loadStart
      .map((l) => fmt(l, 2))
      .join(' / ')} at start, ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' / ')} at end`,
    '',
    '| operation | CPU us/op | share of the SDK exchange |',
    '| --- | --- | --- |',
    ...rows.map(([label, us]) => `| ${label} | ${fmt(us)} | ${fmt((100 * us) / sdk)} % |`),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
