/**
 * The floor: the least a durable task server can do per request, so every figure reads
 * ours / B0 / floor. node:http (or line-delimited stdio) + better-sqlite3 in WAL with
 * synchronous=FULL, one table, no MCP SDK, no validation beyond what the bench client sends: a
 * task-augmented `tools/call` is one INSERT answered after its commit (S1), the 0 ms tool then one
 * UPDATE, both group-committed per event-loop turn as ours are (one fsync per turn, not per
 * write: without it the floor would sit at the disk's fsync rate, under ours); `tasks/get` is one
 * primary-key SELECT. It speaks just enough of the
 * 2025-11-25 task calls for bench/client (initialize, tools/call with and without `task`,
 * tasks/get, tasks/result). Nothing here is a product: it is the yardstick of issue 14.
 *
 *   node --import tsx bench/servers/floor.ts --transport http|stdio --db FILE [--poll-ms 100] [--seed N]
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'http' },
    db: { type: 'string' },
    'poll-ms': { type: 'string', default: '100' },
    seed: { type: 'string', default: '0' },
    'commit-log': { type: 'string' },
  },
});
if (values.db === undefined) throw new Error('--db FILE is required');
const pollInterval = Number(values['poll-ms']);

const db = new Database(values.db);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY, status TEXT NOT NULL, result TEXT, created_at INTEGER NOT NULL) STRICT`);
const insert = db.prepare(`INSERT INTO tasks (id, status, created_at) VALUES (?, 'working', ?)`);
const complete = db.prepare(`UPDATE tasks SET status = 'completed', result = ? WHERE id = ?`);
const select = db.prepare(`SELECT id, status, result, created_at FROM tasks WHERE id = ?`);
const seed = Number(values.seed);
if (seed > 0) {
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < seed; i += 1) insert.run(`seed-${i}`, now);
  })();
}

/** Writes of one event-loop turn, committed in one transaction; each resolves after COMMIT. */
const queued: { readonly write: () => void; readonly done: () => void }[] = [];
const commit = db.transaction((batch: typeof queued) => {
  for (const op of batch) op.write();
});
function durably(write: () => void): Promise<void> {
  return new Promise((done) => {
    if (queued.push({ write, done }) === 1) {
      setImmediate(() => {
        const batch = queued.splice(0);
        commit.immediate(batch);
        for (const op of batch) op.done();
      });
    }
  });
}

interface Row {
  id: string;
  status: string;
  result: string | null;
  created_at: number;
}
type Message = { id?: number | string; method?: string; params?: Record<string, unknown> };

const waiters = new Map<string, (() => void)[]>();
const view = (row: Row) => ({
  taskId: row.id,
  status: row.status,
  createdAt: new Date(row.created_at).toISOString(),
  lastUpdatedAt: new Date(row.created_at).toISOString(),
  ttl: 3_600_000,
  pollInterval,
});

async function run(id: string, ms: number): Promise<void> {
  if (ms > 0) await sleep(ms);
  await durably(() => complete.run(JSON.stringify({ content: [{ type: 'text', text: `slept ${ms} ms` }] }), id));
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
      await durably(() => insert.run(id, now));
      void run(id, ms);
      return { task: view({ id, status: 'working', result: null, created_at: Date.now() }) };
    }
    case 'tasks/get': {
      const row = select.get(String(params.taskId)) as Row | undefined;
      if (row === undefined) throw Object.assign(new Error('task not found'), { code: -32602 });
      return view(row);
    }
    case 'tasks/result': {
      const id = String(params.taskId);
      for (;;) {
        const row = select.get(id) as Row | undefined;
        if (row === undefined) throw Object.assign(new Error('task not found'), { code: -32602 });
        if (row.result !== null) return JSON.parse(row.result) as unknown;
        await new Promise<void>((resolve) => waiters.set(id, [...(waiters.get(id) ?? []), resolve]));
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
  db.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
