/**
 * Ledger schema, numbered and embedded so the package needs no `.sql` files at run time. A migration
 * is never edited once released: add the next number.
 */
export interface LedgerMigration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

export const LEDGER_MIGRATIONS: readonly LedgerMigration[] = [
  {
    id: 1,
    name: 'init',
    sql: `
CREATE TABLE ledger_meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT;
INSERT INTO ledger_meta (key, value) VALUES ('epoch', 0);

-- The whole toolOperation.v1 record is the JSON column; the other columns index or fence it.
CREATE TABLE operations (
  id              TEXT PRIMARY KEY,
  call_node_id    TEXT NOT NULL UNIQUE,
  request_digest  TEXT NOT NULL,
  submission_key  TEXT NOT NULL,
  task_id         TEXT,
  state           TEXT NOT NULL,
  revision        INTEGER NOT NULL,
  execution_epoch INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  record          TEXT NOT NULL
) STRICT;
CREATE INDEX operations_by_state ON operations (state, updated_at, id);
CREATE INDEX operations_by_task ON operations (task_id);

-- Every key an operation ever submitted under, current and earlier: one owner per key (C4, C5).
CREATE TABLE submission_keys (
  submission_key TEXT PRIMARY KEY,
  operation_id   TEXT NOT NULL REFERENCES operations (id)
) STRICT;

-- At most one receipt per call node (C1), enforced by the schema as well as by acceptTerminal.
CREATE TABLE receipts (
  id                TEXT PRIMARY KEY,
  call_node_id      TEXT NOT NULL UNIQUE,
  operation_id      TEXT NOT NULL REFERENCES operations (id),
  task_id           TEXT NOT NULL,
  status            TEXT NOT NULL,
  result_digest     TEXT,
  payload           TEXT NOT NULL,
  epoch             INTEGER NOT NULL,
  cancel_generation INTEGER NOT NULL,
  shadow            INTEGER NOT NULL,
  accepted_at       INTEGER NOT NULL
) STRICT;

CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  receipt_id      TEXT NOT NULL UNIQUE REFERENCES receipts (id),
  call_node_id    TEXT NOT NULL UNIQUE,
  operation_id    TEXT NOT NULL,
  status          TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  acknowledged_at INTEGER
) STRICT;
CREATE INDEX outbox_pending ON outbox (id) WHERE acknowledged_at IS NULL;
`,
  },
  {
    id: 2,
    name: 'receipt_immediate',
    // C12: a synchronous answer is a receipt with no task (task_id ''), marked so a reader can tell.
    sql: `ALTER TABLE receipts ADD COLUMN immediate INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    id: 3,
    name: 'operation_session',
    // The HTTP session an operation was created in (`ToolOperation.session`, JSON): a secret kept out
    // of the record column, so a dump of the records never holds it. NULL: none (older rows too).
    sql: `ALTER TABLE operations ADD COLUMN session TEXT;`,
  },
];
