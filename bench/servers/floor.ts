/**
 * The floor: the least a durable task server can do per request, so every figure reads
 * ours / B0 / floor. node:http (or line-delimited stdio) + one table (`floor-store.ts`: SQLite in
 * WAL with synchronous=FULL, or PostgreSQL with `--pg`), no MCP SDK, no validation beyond what the
 * bench client sends: a task-augmented `tools/call` is one INSERT answered after its commit (S1),
 * the 0 ms tool then one UPDATE, both group-committed per event-loop turn as ours are (one commit
 * per turn, not per write: without it the floor would sit at the disk's fsync rate, under ours);
 * `tasks/get` is one primary-key SELECT (on PostgreSQL, a turn's reads in one statement). It speaks
 * just enough of the 2025-11-25 task calls for bench/client (initialize, tools/call with and
 * without `task`, tasks/get, tasks/result). Nothing here is a product: it is the yardstick of
 * issue 14, and on PostgreSQL the limit that binds ours there.
 *
 *   node --import tsx bench/servers/floor.ts --transport http|stdio (--db FILE | --pg URL [--schema S])
 *     [--poll-ms 100] [--seed N]
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { postgresFloor, sqliteFloor, type FloorRow } from './floor-store.js';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'http' },
    db: { type: 'string' },
    pg: { type: 'string' },
    schema: { type: 'string', default: 'floor' },
    'poll-ms': { type: 'string', default: '100' },
    seed: { type: 'string', default: '0' },
    'commit-log': { type: 'string' },
  },
});
if (values.db === undefined && values.pg === undefined) throw new Error('--db FILE or --pg URL is required');
const pollInterval = Number(values['poll-ms']);
const seed = Number(values.seed);
const store =
  values.pg === undefined ? sqliteFloor(values.db!, seed) : await postgresFloor(values.pg, values.schema, seed);

type Message = { id?: number | string; method?: string; params?: Record<string, unknown> };

const waiters = new Map<string, (() => void)[]>();
const view = (row: FloorRow) => ({
  taskId: row.id,
  status: row.status,
  createdAt: new Date(row.created_at).toISOString(),
  lastUpdatedAt: new Date(row.created_at).toISOString(),
  ttl: 3_600_000,
  pollInterval,
});

async function run(id: string, ms: number): Promise<void> {
  if (ms > 0) await sleep(ms);
  await store.complete(id, JSON.stringify({ content: [{ type: 'text', text: `slept ${ms} ms` }] }));
  for (const wake of waiters.get(id) ?? []) wake();
  waiters.delete(id);
}

/** The answer to one request (undefined for a notification). */
async function answer(message: Message): Promise<unknown> {
  const params = message.params ?? {};
  switch (message.method) {
    case 'initialize':
      return {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } },
        serverInfo: { name: 'floor', version: '0' },
      };
    case 'tools/call': {
      const ms = Number((params.arguments as { ms?: unknown } | undefined)?.ms ?? 0);
      if (params.task === undefined) {
        if (ms > 0) await sleep(ms);
        return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
      }
      const id = randomBytes(16).toString('base64url');
      const now = Date.now();
      await store.insert(id, now);
      void run(id, ms);
      return { task: view({ id, status: 'working', result: null, created_at: Date.now() }) };
    }
    case 'tasks/get': {
      const row = await store.get(String(params.taskId));
      if (row === undefined) throw Object.assign(new Error('task not found'), { code: -32602 });
      return view(row);
    }
    case 'tasks/result': {
      const id = String(params.taskId);
      for (;;) {
        // Listening before the read: a completion landing while the read is on its way (PostgreSQL
        // answers later) still wakes this call.
        let wake!: () => void;
        const woken = new Promise<void>((resolve) => (wake = resolve));
        waiters.set(id, [...(waiters.get(id) ?? []), wake]);
        const row = await store.get(id);
        if (row === undefined || row.result !== null) {
          const left = (waiters.get(id) ?? []).filter((w) => w !== wake);
          if (left.length === 0) waiters.delete(id);
          else waiters.set(id, left);
        }
        if (row === undefined) throw Object.assign(new Error('task not found'), { code: -32602 });
        if (row.result !== null) return JSON.parse(row.result) as unknown;
        await woken;
      }
    }
    default:
      throw Object.assign(new Error(`no method ${String(message.method)}`), { code: -32601 });
  }
}

async function reply(message: Message): Promise<string | undefined> {
  if (message.id === undefined) return undefined;
  try {
    return JSON.stringify({ jsonrpc: '2.0', id: message.id, result: await answer(message) });
  } catch (error) {
    const code = (error as { code?: number }).code ?? -32603;
    return JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code, message: (error as Error).message } });
  }
}

if (values.transport === 'stdio') {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    void reply(JSON.parse(line) as Message).then((text) => {
      if (text !== undefined) process.stdout.write(`${text}\n`);
    });
  });
  lines.on('close', () => process.exit(0));
} else {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      void reply(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Message).then((text) => {
        if (text === undefined) res.writeHead(202).end();
        else
          res
            .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
            .end(text);
      });
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
  });
}

const stop = (): void => {
  void store.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
