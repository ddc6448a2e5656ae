import type { Sql } from '../db.js';

/**
 * 005: ordered task events (issue 32). One row per event; the counter lives on the task row, and
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
`;
