import type { Sql } from '../db.js';

/**
 * 002: the claim's index, per tool. 001's `tasks_runnable (created_at, id)` is ordered for every
 * tool at once, so a node serving tool B walks past every open task of tool A before its first
 * candidate. `(tool, created_at, id)` over open tasks only lets the claim read each of its tools in
 * order and stop after `limit` rows (src/store/postgres/claim.ts; plan asserted in
 * test/store/claim-plan.test.ts). Lease columns stay out of the key: heartbeats rewrite them every
 * few seconds and must not move index entries.
 */
export const sql: Sql = (t) => `
CREATE INDEX tasks_claim_order ON ${t.tasks} (tool, created_at, id) WHERE status IN ('working', 'input_required');
DROP INDEX ${t.schema}.tasks_runnable;
`;
