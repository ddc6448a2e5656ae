import type { Sql } from '../db.js';

/**
 * 001: tasks and submission keys. Embedded as a TS string so `dist/` works without a copy step.
 * Times are bigint epoch milliseconds from the injected clock; JSON is jsonb.
 */
export const sql: Sql = (t) => `
CREATE TABLE ${t.tasks} (
  id               text COLLATE "C" PRIMARY KEY,
  owner            text NOT NULL,
  tool             text NOT NULL,
  args             jsonb NOT NULL,
  request_digest   text NOT NULL,
  submission_key   text,
  wire             text NOT NULL,
  status           text NOT NULL
                   CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message   text,
  progress         jsonb,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  ttl_ms           bigint,
  poll_interval_ms bigint NOT NULL,
  keep_alive_ms    bigint,
  terminal_at      bigint,
  -- expiresAt() of core/task.ts, kept by the database itself; null while the task works (S7).
  expires_at       bigint GENERATED ALWAYS AS (
                     CASE
                       WHEN terminal_at IS NULL THEN NULL
                       WHEN keep_alive_ms IS NOT NULL THEN terminal_at + keep_alive_ms
                       WHEN ttl_ms IS NULL THEN NULL
                       ELSE GREATEST(created_at + ttl_ms, terminal_at + 60000)
                     END) STORED,
  lease_owner      text,
  lease_expires_at bigint,
  epoch            integer NOT NULL DEFAULT 0,
  cancel_requested boolean NOT NULL DEFAULT false,
  checkpoint       jsonb,
  input_requests   jsonb NOT NULL DEFAULT '{}',
  input_responses  jsonb NOT NULL DEFAULT '{}',
  result           jsonb,
  error            jsonb,
  result_digest    text,
  late_outcome     jsonb,
  CHECK ((status IN ('completed', 'failed', 'cancelled')) = (terminal_at IS NOT NULL))
);

-- claim: oldest runnable first.
CREATE INDEX tasks_runnable ON ${t.tasks} (created_at, id) WHERE status IN ('working', 'input_required');
-- list: an owner's tasks newest first.
CREATE INDEX tasks_owner_newest ON ${t.tasks} (owner, created_at DESC, id DESC);
-- sweepExpired.
CREATE INDEX tasks_expires ON ${t.tasks} (expires_at) WHERE expires_at IS NOT NULL;

-- A key maps to the task that used it, or to NULL once lookupKey burned it (S6). Rows outlive the
-- swept task, so a spent key stays spent. The primary key is what makes two nodes racing on one
-- key create one task: the second INSERT waits for the first and then conflicts.
CREATE TABLE ${t.keys} (
  owner          text NOT NULL,
  submission_key text NOT NULL,
  task_id        text COLLATE "C",
  created_at     bigint NOT NULL,
  PRIMARY KEY (owner, submission_key)
);

-- Defence in depth for S2: every write is conditional already; this makes a bug loud.
CREATE FUNCTION ${t.schema}.terminus_keep_terminal() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF OLD.status IN ('completed', 'failed', 'cancelled') AND NEW.status IS DISTINCT FROM OLD.status THEN
    RAISE EXCEPTION 'task % is %: terminal statuses are final', OLD.id, OLD.status USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER tasks_keep_terminal BEFORE UPDATE OF status ON ${t.tasks}
  FOR EACH ROW EXECUTE FUNCTION ${t.schema}.terminus_keep_terminal();
`;
