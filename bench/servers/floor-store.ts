/**
 * The floor's one table, on SQLite or on PostgreSQL: the least a durable task server stores.
 * Writes of one event-loop turn go as one commit and each resolves after it (group commit, as
 * ours does), so neither floor sits at one commit per write. PostgreSQL reads of one turn go as one
 * prepared `= ANY` statement (ours batches its reads the same way), on a pool of 4 connections
 * (ours reads on up to 4 at once).
 */
import Database from 'better-sqlite3';
import pg from 'pg';

export interface FloorRow {
  readonly id: string;
  readonly status: string;
  readonly result: string | null;
  readonly created_at: number;
}

export interface FloorStore {
  /** A new `working` task, resolved after its commit. */
  insert(id: string, now: number): Promise<void>;
  /** The task completed with `result` (JSON text), resolved after its commit. */
  complete(id: string, result: string): Promise<void>;
  /** SQLite answers in the same turn; PostgreSQL after its round trip. */
  get(id: string): FloorRow | undefined | Promise<FloorRow | undefined>;
  close(): Promise<void>;
}

/** Items queued in one turn, handed to `flush` together at its end. */
function perTurn<T, R>(flush: (items: T[]) => Promise<Map<T, R>> | Map<T, R>): (item: T) => Promise<R> {
  let queued: { item: T; done: (value: R) => void; fail: (error: unknown) => void }[] = [];
  return (item) =>
    new Promise<R>((done, fail) => {
      if (queued.push({ item, done, fail }) > 1) return;
      setImmediate(() => {
        const batch = queued;
        queued = [];
        Promise.resolve()
          .then(() => flush(batch.map((q) => q.item)))
          .then(
            (results) => {
              for (const q of batch) q.done(results.get(q.item) as R);
            },
            (error: unknown) => {
              for (const q of batch) q.fail(error);
            },
          );
      });
    });
}

type Write = { readonly kind: 'insert'; readonly id: string; readonly now: number } | CompleteWrite;
type CompleteWrite = { readonly kind: 'complete'; readonly id: string; readonly result: string };

/** WAL, `synchronous=FULL`; `seed` working tasks written at the start. */
export function sqliteFloor(path: string, seed: number): FloorStore {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY, status TEXT NOT NULL, result TEXT, created_at INTEGER NOT NULL) STRICT`);
  const insert = db.prepare(`INSERT INTO tasks (id, status, created_at) VALUES (?, 'working', ?)`);
  const complete = db.prepare(`UPDATE tasks SET status = 'completed', result = ? WHERE id = ?`);
  const select = db.prepare(`SELECT id, status, result, created_at FROM tasks WHERE id = ?`);
  if (seed > 0) {
    const now = Date.now();
    db.transaction(() => {
      for (let i = 0; i < seed; i += 1) insert.run(`seed-${i}`, now);
    })();
  }
  const commit = db.transaction((writes: Write[]) => {
    for (const w of writes) {
      if (w.kind === 'insert') insert.run(w.id, w.now);
      else complete.run(w.result, w.id);
    }
  });
  const write = perTurn<Write, undefined>((writes) => {
    commit.immediate(writes);
    return new Map();
  });
  return {
    insert: (id, now) => write({ kind: 'insert', id, now }),
    complete: (id, result) => write({ kind: 'complete', id, result }),
    get: (id) => select.get(id) as FloorRow | undefined,
    close: async () => {
      db.close();
    },
  };
}

/** Autocommit statements (`synchronous_commit` as the server has it) in schema `schema`. */
export async function postgresFloor(url: string, schema: string, seed: number): Promise<FloorStore> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const table = `"${schema.replaceAll('"', '""')}".tasks`;
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '""')}"`);
  await pool.query(`CREATE TABLE IF NOT EXISTS ${table} (
  id text COLLATE "C" PRIMARY KEY, status text NOT NULL, result text, created_at bigint NOT NULL)`);
  if (seed > 0) {
    await pool.query(
      `INSERT INTO ${table} (id, status, created_at) SELECT 'seed-' || i, 'working', $2 FROM generate_series(0, $1 - 1) AS i`,
      [seed, Date.now()],
    );
  }
  const read = perTurn<string, FloorRow | undefined>(async (ids) => {
    const { rows } = await pool.query<FloorRow>({
      name: 'floor_get',
      text: `SELECT id, status, result, created_at FROM ${table} WHERE id = ANY ($1::text[])`,
      values: [ids],
    });
    return new Map(rows.map((row) => [row.id, { ...row, created_at: Number(row.created_at) }]));
  });
  const write = perTurn<Write, undefined>(async (writes) => {
    const inserts = writes.filter((w) => w.kind === 'insert');
    const completes = writes.filter((w): w is CompleteWrite => w.kind === 'complete');
    await Promise.all([
      inserts.length === 0
        ? undefined
        : pool.query({
            name: 'floor_insert',
            text: `INSERT INTO ${table} (id, status, created_at) SELECT id, 'working', now FROM unnest($1::text[], $2::bigint[]) AS w(id, now)`,
            values: [inserts.map((w) => w.id), inserts.map((w) => w.now)],
          }),
      completes.length === 0
        ? undefined
        : pool.query({
            name: 'floor_complete',
            text: `UPDATE ${table} AS t SET status = 'completed', result = w.result FROM unnest($1::text[], $2::text[]) AS w(id, result) WHERE t.id = w.id`,
            values: [completes.map((w) => w.id), completes.map((w) => w.result)],
          }),
    ]);
    return new Map();
  });
  return {
    insert: (id, now) => write({ kind: 'insert', id, now }),
    complete: (id, result) => write({ kind: 'complete', id, result }),
    get: read,
    close: () => pool.end(),
  };
}
