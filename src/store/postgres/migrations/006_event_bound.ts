import type { Sql } from '../db.js';

/**
 * 006: the per-task bound on events. `event_kept` counts the task's `progress` and `log` event rows
 * (the kinds the bound may drop), so an append knows without counting whether it must delete the
 * oldest; it is set from the rows already there.
 */
export const sql: Sql = (t) => `
ALTER TABLE ${t.tasks} ADD COLUMN event_kept bigint NOT NULL DEFAULT 0;
UPDATE ${t.tasks} SET event_kept = (
  SELECT count(*) FROM ${t.events} e WHERE e.task_id = ${t.tasks}.id AND e.kind IN ('progress', 'log')
) WHERE event_seq > 0;
`;
