/**
 * 006: the per-task bound on events. `event_kept` counts the task's `progress` and `log` event rows
 * (the kinds the bound may drop), so an append knows without counting whether it must delete the
 * oldest; it is set from the rows already there.
 */
export const sql = `
ALTER TABLE tasks ADD COLUMN event_kept INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET event_kept = (
  SELECT count(*) FROM task_events e WHERE e.task_id = tasks.id AND e.kind IN ('progress', 'log')
) WHERE event_seq > 0;
`;
