/**
 * 002: the claim's index. 001's `tasks_claim (status, lease_expires_at)` cannot give "this tool,
 * oldest first": the claim ran `SCAN tasks` plus `USE TEMP B-TREE FOR ORDER BY`, 8-27 ms at 100,000
 * open tasks inside the write transaction (issue 14). This partial index holds only open tasks,
 * ordered per tool, so a claim reads `limit` entries (plus the leased ones it skips, at most the
 * handlers running on every node) whatever the backlog. Its WHERE is the claim's `status IN LIVE`
 * term verbatim: SQLite uses a partial index only when the query repeats its condition.
 */
export const sql = `
CREATE INDEX tasks_claim_order ON tasks (tool, created_at, id) WHERE status IN ('working', 'input_required');
DROP INDEX tasks_claim;
`;
