import type { Tables } from '../db.js';
import type { Migration } from '../migrate.js';
import { sql as init } from './001_init.js';

/** The task store's migrations (component `tasks`). */
export const MIGRATIONS: readonly Migration<Tables>[] = [{ id: 1, name: '001_init', sql: init }];
