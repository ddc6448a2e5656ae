import type { Tables } from '../db.js';
import type { Migration } from '../../../sql/pg-migrate.js';
import { sql as init } from './001_init.js';
import { sql as claimOrder } from './002_claim_order.js';
import { sql as taskLogs } from './003_task_logs.js';
import { sql as ownerLive } from './004_owner_live.js';
import { sql as events } from './005_events_webhooks.js';
import { sql as eventBound } from './006_event_bound.js';

/** The task store's migrations (component `tasks`). */
export const MIGRATIONS: readonly Migration<Tables>[] = [
  { id: 1, name: '001_init', sql: init },
  { id: 2, name: '002_claim_order', sql: claimOrder },
  { id: 3, name: '003_task_logs', sql: taskLogs },
  { id: 4, name: '004_owner_live', sql: ownerLive },
  { id: 5, name: '005_events_webhooks', sql: events },
  { id: 6, name: '006_event_bound', sql: eventBound },
];
