/**
 * 001: tasks and submission keys. Embedded as a TS string so `dist/` works without a copy step.
 * JSON columns are TEXT; times are epoch milliseconds from the injected clock.
 */
export const sql = `
CREATE TABLE tasks (
  id               TEXT PRIMARY KEY,
  owner            TEXT NOT NULL,
  tool             TEXT NOT NULL,
  args             TEXT NOT NULL,
  request_digest   TEXT NOT NULL,
  submission_key   TEXT,
  wire             TEXT NOT NULL,
  status           TEXT NOT NULL
                   CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message   TEXT,
  progress         TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  ttl_ms           INTEGER,
  poll_interval_ms INTEGER NOT NULL,
  keep_alive_ms    INTEGER,
  terminal_at      INTEGER,
  -- expiresAt() of core/task.ts, written with every terminal write; null while the task works (S7).
  expires_at       INTEGER,
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  epoch            INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  checkpoint       TEXT,
  input_requests   TEXT NOT NULL DEFAULT '{}',
  input_responses  TEXT NOT NULL DEFAULT '{}',
  result           TEXT,
  error            TEXT,
  result_digest    TEXT,
  late_outcome     TEXT
) STRICT;

-- claim: runnable statuses whose lease is absent or expired.
CREATE INDEX tasks_claim ON tasks (status, lease_expires_at);
-- list: an owner's tasks newest first, keyset-paginated on (created_at, id).
CREATE INDEX tasks_owner ON tasks (owner, created_at DESC, id DESC);
-- S5: one task per (owner, submission key).
CREATE UNIQUE INDEX tasks_owner_key ON tasks (owner, submission_key) WHERE submission_key IS NOT NULL;
-- sweep: only terminal tasks have an expiry.
CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;

-- Every key ever used or looked up, per owner. task_id NULL is a tombstone: looked up before any
-- task used it, so a later create is refused (S6). Rows outlive their task, so a swept task's key
-- stays spent.
CREATE TABLE submission_keys (
  owner          TEXT NOT NULL,
  submission_key TEXT NOT NULL,
  task_id        TEXT,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (owner, submission_key)
) STRICT, WITHOUT ROWID;
`;
