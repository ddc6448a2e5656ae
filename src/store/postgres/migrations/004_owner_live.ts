import type { Sql } from '../db.js';

/**
 * 004: an owner's unfinished tasks, for the per-caller cap (T-79) that every create checks in its
 * own statement (`NewTask.maxLive`, src/store/postgres/create.ts). Without it the count walked the
 * owner's whole history on `tasks_owner_newest`, finished tasks included; over this partial index
 * it reads only the live ones, and stops at the cap.
 */
export const sql: Sql = (t) => `
CREATE INDEX tasks_owner_live ON ${t.tasks} (owner) WHERE status IN ('working', 'input_required');
`;
