/**
 * 005: ordered task events (issue 32). One row per event; the counter lives on the task row and is
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
`;
