/**
 * 003: task logs (issue 18). One row per kept line; the counters live on the task row, so the seq
 * of the next line and the number dropped survive the deletion of old lines, and the fenced
 * append reads and writes them in the same statement set as the lines. `WITHOUT ROWID`: the
 * primary key (task_id, seq) is the only access path (reads walk one task's lines in seq order).
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN log_seq     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN log_lines   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN log_bytes   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN log_dropped INTEGER NOT NULL DEFAULT 0;

CREATE TABLE task_logs (
  task_id TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  epoch   INTEGER NOT NULL,
  at      INTEGER NOT NULL,
  stream  TEXT NOT NULL CHECK (stream IN ('log', 'output')),
  text    TEXT NOT NULL,
  fields  TEXT,
  bytes   INTEGER NOT NULL,
  PRIMARY KEY (task_id, seq)
) STRICT, WITHOUT ROWID;
`;
