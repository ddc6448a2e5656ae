/**
 * Opens a store of ours and fills it with open tasks through the store API (`create`), much faster
 * than submitting over a wire. Seeded tasks name a tool no bench server registers, so no runner
 * ever claims them: they stay `working`, i.e. open.
 */
import { randomBytes } from 'node:crypto';
import { requestDigest } from '../../src/core/digest.js';
import { openPostgresTaskStore } from '../../src/postgres.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { pool } from '../client/tasks.js';
import type { Database } from './variants.js';

export const PARKED_TOOL = 'bench_parked';

export function openStore(db: Database): Promise<TaskStore> {
  return db.kind === 'sqlite'
    ? openSqliteTaskStore({ path: db.path })
    : openPostgresTaskStore({ connectionString: db.url, schema: db.schema });
}

/** Adds `count` open tasks; creates run `width` at a time (the SQLite store batches them into group commits). */
export async function seedOpenTasks(store: TaskStore, count: number, width = 256): Promise<void> {
  const now = Date.now();
  await pool(count, width, async (i) => {
    const args = { i };
    await store.create({
      id: randomBytes(16).toString('base64url'),
      owner: 'auth:seed',
      tool: PARKED_TOOL,
      args,
      requestDigest: requestDigest(PARKED_TOOL, args),
      submissionKey: null,
      wire: 'mcp-2025-11-25',
      ttlMs: 86_400_000,
      keepAliveMs: null,
      pollIntervalMs: 1000,
      now,
    });
  });
}
