/**
 * 005: ordered task events and the webhook outbox (issue 32). One row per event; the counter lives on the task row and is
 * bumped by the write that appends, inside the same group-commit savepoint as the change the
 * events record, so a seq is never assigned to a change that did not commit and none is skipped.
 * `log` events name their line by `log_seq` (the text is kept once, in `task_logs`).
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;

CREATE TABLE task_events (
  task_id TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  at      INTEGER NOT NULL,
  kind    TEXT NOT NULL CHECK (kind IN ('status', 'progress', 'input_requested', 'input_answered', 'log')),
  data    TEXT NOT NULL,
  log_seq INTEGER,
  PRIMARY KEY (task_id, seq)
) STRICT, WITHOUT ROWID;

-- The endpoints a task's status events go to (JSON array of WebhookEndpoint), null for none.
ALTER TABLE tasks ADD COLUMN webhooks TEXT;

-- One row per (status event, endpoint), written in the commit of the status change. It outlives
-- its task (a delivery is retried for a day; a task may be swept an hour after it ended), so it
-- carries everything the delivery needs.
CREATE TABLE webhook_outbox (
  task_id          TEXT NOT NULL,
  seq              INTEGER NOT NULL,
  endpoint         INTEGER NOT NULL,
  owner            TEXT NOT NULL,
  tool             TEXT NOT NULL,
  url              TEXT NOT NULL,
  secret           TEXT NOT NULL,
  status           TEXT NOT NULL,
  status_message   TEXT,
  event_at         INTEGER NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_at          INTEGER,
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  created_at       INTEGER NOT NULL,
  done_at          INTEGER,
  PRIMARY KEY (task_id, seq, endpoint)
) STRICT, WITHOUT ROWID;
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_at) WHERE state = 'pending';
CREATE INDEX webhook_outbox_done ON webhook_outbox (done_at) WHERE state <> 'pending';

CREATE TABLE webhook_attempts (
  task_id     TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  endpoint    INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  at          INTEGER NOT NULL,
  node        TEXT NOT NULL,
  status_code INTEGER,
  error       TEXT,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (task_id, seq, endpoint, attempt)
) STRICT, WITHOUT ROWID;
`;
