/**
 * The columns of a `tasks` row, in table order (migration 001), the same on SQLite and PostgreSQL:
 * what every task read selects (`src/store/sqlite/row.ts`) and what the PostgreSQL schema check
 * requires. The log counters of migration 003 come after them.
 */
export const TASK_ROW_COLUMNS = [
  'id',
  'owner',
  'tool',
  'args',
  'request_digest',
  'submission_key',
  'wire',
  'status',
  'status_message',
  'progress',
  'created_at',
  'updated_at',
  'ttl_ms',
  'poll_interval_ms',
  'keep_alive_ms',
  'terminal_at',
  'expires_at',
  'lease_owner',
  'lease_expires_at',
  'epoch',
  'cancel_requested',
  'checkpoint',
  'input_requests',
  'input_responses',
  'result',
  'error',
  'result_digest',
  'late_outcome',
] as const;

/** Each task's log counters (migration 003), after `TASK_ROW_COLUMNS`. */
export const TASK_LOG_COLUMNS = ['log_seq', 'log_lines', 'log_bytes', 'log_dropped'] as const;

/** Each task's ordered-event counter (migration 005), after `TASK_LOG_COLUMNS` in the table. */
export const TASK_EVENT_COLUMNS = ['event_seq'] as const;

/** The count of kept droppable events (migration 006), after `TASK_EVENT_COLUMNS`; read by event appends only. */
export const TASK_EVENT_BOUND_COLUMNS = ['event_kept'] as const;

/**
 * What a task read selects, in this order (`toRecord` of either store maps the values by position):
 * the task's columns, then its event counter. The log counters are read by the log's own queries.
 */
export const TASK_READ_COLUMNS = [...TASK_ROW_COLUMNS, ...TASK_EVENT_COLUMNS] as const;
