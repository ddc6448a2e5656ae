import type { Sql } from '../db.js';

/**
 * 005: ordered task events and the webhook outbox (issue 32). One row per event; the counter lives on the task row, and
 * the append bumps it with an UPDATE in the transaction of the write the events record: the row
 * lock it takes serialises concurrent writers to one task (two nodes, a stale and a current epoch)
 * until commit, so seqs follow commit order, and a rolled-back write takes its seqs back with it
 * (no gap). `log` events name their line by `log_seq` (the text is kept once, in `task_logs`). The
 * foreign key deletes a swept task's events with it.
 */
export const sql: Sql = (t) => `
ALTER TABLE ${t.tasks} ADD COLUMN event_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE ${t.events} (
  task_id text COLLATE "C" NOT NULL REFERENCES ${t.tasks} (id) ON DELETE CASCADE,
  seq     bigint NOT NULL,
  at      bigint NOT NULL,
  kind    text NOT NULL CHECK (kind IN ('status', 'progress', 'input_requested', 'input_answered', 'log')),
  data    jsonb NOT NULL,
  log_seq bigint,
  PRIMARY KEY (task_id, seq)
);

-- The endpoints a task's status events go to (JSON array of WebhookEndpoint), null for none.
ALTER TABLE ${t.tasks} ADD COLUMN webhooks jsonb;

-- One row per (status event, endpoint), written in the commit of the status change. No foreign
-- key: it outlives its task (a delivery is retried for a day), so it carries what it needs.
CREATE TABLE ${t.outbox} (
  task_id          text COLLATE "C" NOT NULL,
  seq              bigint NOT NULL,
  endpoint         integer NOT NULL,
  owner            text NOT NULL,
  tool             text NOT NULL,
  url              text NOT NULL,
  secret           text NOT NULL,
  status           text NOT NULL,
  status_message   text,
  event_at         bigint NOT NULL,
  state            text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts         integer NOT NULL DEFAULT 0,
  next_at          bigint,
  lease_owner      text,
  lease_expires_at bigint,
  created_at       bigint NOT NULL,
  done_at          bigint,
  PRIMARY KEY (task_id, seq, endpoint)
);
CREATE INDEX webhook_outbox_due ON ${t.outbox} (next_at) WHERE state = 'pending';
CREATE INDEX webhook_outbox_done ON ${t.outbox} (done_at) WHERE state <> 'pending';

CREATE TABLE ${t.attempts} (
  task_id     text COLLATE "C" NOT NULL,
  seq         bigint NOT NULL,
  endpoint    integer NOT NULL,
  attempt     integer NOT NULL,
  at          bigint NOT NULL,
  node        text NOT NULL,
  status_code integer,
  error       text,
  duration_ms integer NOT NULL,
  PRIMARY KEY (task_id, seq, endpoint, attempt)
);
`;
