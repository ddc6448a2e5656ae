import { sql as init } from './001_init.js';
import { sql as claimOrder } from './002_claim_order.js';
import { sql as taskLogs } from './003_task_logs.js';
import { sql as events } from './005_events_webhooks.js';
import { sql as eventBound } from './006_event_bound.js';

export interface Migration {
  /** Applied in ascending order; never renumber or edit one that has shipped, add the next. */
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { id: 1, name: '001_init', sql: init },
  { id: 2, name: '002_claim_order', sql: claimOrder },
  { id: 3, name: '003_task_logs', sql: taskLogs },
  // 004 (004_owner_live, an index of live tasks by owner) exists on PostgreSQL only; ids need not be contiguous.
  { id: 5, name: '005_events_webhooks', sql: events },
  { id: 6, name: '006_event_bound', sql: eventBound },
];
