/**
 * One memory measurement in a process of its own (run with `--expose-gc`): the heap growth and the
 * bytes on disk per stored item, for B0's `InMemoryTaskStore`, our task stores, or our SQLite
 * ledger. Prints one JSON line `{ heapBytesPerItem, diskBytesPerItem }`.
 *
 *   node --expose-gc --import tsx bench/figures/memory-probe.ts KIND COUNT [PATH | URL SCHEMA]
 */
import { existsSync, statSync } from 'node:fs';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import pg from 'pg';
import { requestDigest } from '../../src/core/digest.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { newOperation } from '../../src/executor/operation.js';
import { pool } from '../client/tasks.js';
import { openStore, seedOpenTasks } from '../lib/seed.js';

const [kind, countText, where, schema] = process.argv.slice(2);
const count = Number(countText);

function heap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const fileBytes = (path: string): number =>
  [path, `${path}-wal`].reduce((sum, p) => sum + (existsSync(p) ? statSync(p).size : 0), 0);

async function pgBytes(url: string, name: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [name],
  );
  await client.end();
  return Number(rows[0]?.bytes ?? 0);
}

let heapDelta = 0;
let disk = 0;
if (kind === 'b0') {
  const store = new InMemoryTaskStore();
  const before = heap();
  for (let i = 0; i < count; i += 1) {
    await store.createTask({ ttl: null, pollInterval: 1000 }, i, {
      method: 'tools/call',
      params: { name: 'bench_parked', arguments: { i } },
    });
  }
  heapDelta = heap() - before;
  store.cleanup();
} else if (kind === 'sqlite' || kind === 'postgres') {
  const db =
    kind === 'sqlite'
      ? ({ kind: 'sqlite', path: where! } as const)
      : ({ kind: 'postgres', url: where!, schema: schema! } as const);
  const store = await openStore(db);
  // The empty store's own footprint is not per task: measure from here, and the disk from a
  // store holding one task.
  await seedOpenTasks(store, 1);
  const emptyDisk = kind === 'sqlite' ? fileBytes(where!) : await pgBytes(where!, schema!);
  const before = heap();
  await seedOpenTasks(store, count, { keepIds: false });
  heapDelta = heap() - before;
  await store.close();
  disk = (kind === 'sqlite' ? fileBytes(where!) : await pgBytes(where!, schema!)) - emptyDisk;
} else if (kind === 'ledger') {
  const ledger = openSqliteLedger({ path: where! });
  const epoch = await ledger.currentEpoch();
  const make = (i: number) => ({
    ...newOperation({
      id: `op_${i}`,
      callNodeId: `node-${i}`,
      requestDigest: requestDigest('bench_sleep', { ms: i }),
      tool: { name: 'bench_sleep', descriptorVersion: 'unversioned' },
      body: { ms: i },
      wire: { name: 'mcp-tasks-ext', adapterVersion: 'tasks-ext-client/1' },
      submissionKey: `skey_${i}`,
      executionEpoch: epoch,
      now: Date.now(),
      budgetMs: 3_600_000,
    }),
    server: 'bench',
  });
  await ledger.create(make(-1));
  const emptyDisk = fileBytes(where!);
  const before = heap();
  await pool(count, 64, async (i) => {
    await ledger.create(make(i));
  });
  heapDelta = heap() - before;
  await ledger.close();
  disk = fileBytes(where!) - emptyDisk;
} else {
  throw new Error(`unknown kind ${kind}`);
}
process.stdout.write(`${JSON.stringify({ heapBytesPerItem: heapDelta / count, diskBytesPerItem: disk / count })}\n`);
