import type { Sql } from '../db.js';

/**
 * 003: task logs (issue 18). One row per kept line; the counters live on the task row, which the
 * fenced append locks (`FOR UPDATE`), so two appends to one task (a stale and a current epoch on
 * two nodes) serialise and seqs never repeat. The foreign key deletes a swept task's log with it.
 */
export const sql: Sql = (t) => `
ALTER TABLE ${t.tasks}
  ADD COLUMN log_seq     bigint NOT NULL DEFAULT 0,
  ADD COLUMN log_lines   bigint NOT NULL DEFAULT 0,
  ADD COLUMN log_bytes   bigint NOT NULL DEFAULT 0,
  ADD COLUMN log_dropped bigint NOT NULL DEFAULT 0;

CREATE TABLE ${t.logs} (
  task_id text COLLATE "C" NOT NULL REFERENCES ${t.tasks} (id) ON DELETE CASCADE,
  seq     bigint NOT NULL,
  epoch   integer NOT NULL,
  at      bigint NOT NULL,
  stream  text NOT NULL CHECK (stream IN ('log', 'output')),
  text    text NOT NULL,
  fields  jsonb,
  bytes   integer NOT NULL,
  PRIMARY KEY (task_id, seq)
);
`;
