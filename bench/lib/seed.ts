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

export interface SeedOptions {
  /** Default `bench_parked`: never claimed. */
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  /** Default `auth:seed`; `stdio` makes them readable by a stdio client. */
  readonly owner?: string;
  readonly width?: number;
  /** Default true; false keeps the heap free of the id list (memory probes). */
  readonly keepIds?: boolean;
}

/**
 * Adds `count` open tasks and resolves with their ids; creates run `width` at a time (the SQLite
 * store batches them into group commits).
 */
export async function seedOpenTasks(store: TaskStore, count: number, options: SeedOptions = {}): Promise<string[]> {
  const now = Date.now();
  const tool = options.tool ?? PARKED_TOOL;
  const ids: string[] = [];
  await pool(count, options.width ?? 256, async (i) => {
    const args = options.args ?? { i };
    const id = randomBytes(16).toString('base64url');
    if (options.keepIds !== false) ids.push(id);
    await store.create({
      id,
      owner: options.owner ?? 'auth:seed',
      tool,
      args,
      requestDigest: requestDigest(tool, args),
      submissionKey: null,
      wire: 'mcp-2025-11-25',
      ttlMs: 86_400_000,
      keepAliveMs: null,
      pollIntervalMs: 1000,
      now,
    });
  });
  return ids;
}
