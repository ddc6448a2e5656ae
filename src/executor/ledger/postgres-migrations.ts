/**
 * PostgreSQL ledger schema (component `ledger` of `schema_migrations`), numbered and embedded so the
 * package needs no `.sql` files at run time. Never edit a released migration: add the next number.
 * Tables are prefixed `ledger_` so a ledger may share a schema with a task store.
 */
import type { SchemaTables } from '../../sql/pg-db.js';
import type { Migration } from '../../sql/pg-migrate.js';

export interface LedgerTables extends SchemaTables {
  readonly meta: string;
  readonly operations: string;
  readonly keys: string;
  readonly receipts: string;
  readonly outbox: string;
}

export const LEDGER_MIGRATIONS: readonly Migration<LedgerTables>[] = [
  {
    id: 1,
    name: '001_ledger_init',
    sql: (t) => `
CREATE TABLE ${t.meta} (
  key   text PRIMARY KEY,
  value bigint NOT NULL
);
INSERT INTO ${t.meta} (key, value) VALUES ('epoch', 0);

-- The whole toolOperation.v1 record is the jsonb column; the other columns index or fence it.
CREATE TABLE ${t.operations} (
  id              text COLLATE "C" PRIMARY KEY,
  call_node_id    text NOT NULL UNIQUE,
  request_digest  text NOT NULL,
  submission_key  text NOT NULL,
  task_id         text,
  state           text NOT NULL,
  revision        integer NOT NULL,
  execution_epoch integer NOT NULL,
  updated_at      bigint NOT NULL,
  record          jsonb NOT NULL
);
CREATE INDEX ledger_operations_by_state ON ${t.operations} (state, updated_at, id);
CREATE INDEX ledger_operations_by_task ON ${t.operations} (task_id);

-- Every key an operation ever submitted under, current and earlier: one owner per key (C4, C5).
CREATE TABLE ${t.keys} (
  submission_key text PRIMARY KEY,
  operation_id   text COLLATE "C" NOT NULL REFERENCES ${t.operations} (id)
);

-- At most one receipt per call node (C1), enforced by the schema as well as by acceptTerminal.
CREATE TABLE ${t.receipts} (
  id                text PRIMARY KEY,
  call_node_id      text NOT NULL UNIQUE,
  operation_id      text COLLATE "C" NOT NULL REFERENCES ${t.operations} (id),
  task_id           text NOT NULL,
  status            text NOT NULL,
  result_digest     text,
  payload           jsonb NOT NULL,
  epoch             integer NOT NULL,
  cancel_generation integer NOT NULL,
  shadow            boolean NOT NULL,
  accepted_at       bigint NOT NULL
);

CREATE TABLE ${t.outbox} (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  receipt_id      text NOT NULL UNIQUE REFERENCES ${t.receipts} (id),
  call_node_id    text NOT NULL UNIQUE,
  operation_id    text NOT NULL,
  status          text NOT NULL,
  created_at      bigint NOT NULL,
  acknowledged_at bigint
);
CREATE INDEX ledger_outbox_pending ON ${t.outbox} (id) WHERE acknowledged_at IS NULL;
`,
  },
  {
    id: 2,
    name: '002_ledger_receipt_immediate',
    // C12: a synchronous answer is a receipt with no task (task_id ''), marked so a reader can tell.
    sql: (t) => `ALTER TABLE ${t.receipts} ADD COLUMN immediate boolean NOT NULL DEFAULT false;`,
  },
  {
    id: 3,
    name: '003_ledger_operation_session',
    // The HTTP session an operation was created in (`ToolOperation.session`): a secret kept out of
    // the record column, so a dump of the records never holds it. NULL: none (older rows too).
    sql: (t) => `ALTER TABLE ${t.operations} ADD COLUMN session jsonb;`,
  },
];
