import type { Command } from 'commander';
import { silentLogger } from '../core/ports.js';
import type { DeliveryRecord } from '../store/outbox-port.js';
import { existsSync } from 'node:fs';
import { defaultNodeId, isPostgresUrl, openStoreOrExit } from './open-store.js';

interface WebhooksFlags {
  readonly db: string;
  readonly pgSchema?: string;
  readonly json: boolean;
}

/**
 * `terminus webhooks TASK_ID --db FILE|URL`: the webhook deliveries of one task, read from the
 * server's store (an operator's view, every owner): each outbox row (event, endpoint, state) and
 * every attempt (when, which node, status code or error, duration). Exit 0, or 1 when the task has
 * none (it had no webhooks, or its rows were swept).
 */
export function registerWebhooks(program: Command): void {
  program
    .command('webhooks')
    .description('Show the webhook deliveries of a task from the server’s database (an operator’s view)')
    .argument('<task-id>', 'the task id')
    .option('--db <file|url>', 'the server’s SQLite file or postgres:// URL', '.terminus/terminus.db')
    .option('--pg-schema <name>', 'PostgreSQL schema of the tables')
    .option('--json', 'one JSON array of deliveries with their attempts', false)
    .action(async (taskId: string, flags: WebhooksFlags) => {
      // A reader: it never creates the database it was pointed at.
      if (!isPostgresUrl(flags.db) && !existsSync(flags.db)) {
        process.stderr.write(`terminus webhooks: no database at ${flags.db} (pass the server's --db)\n`);
        process.exit(2);
      }
      const opened = await openStoreOrExit(
        {
          db: flags.db,
          nodeId: defaultNodeId(),
          logger: silentLogger,
          ...(flags.pgSchema === undefined ? {} : { pgSchema: flags.pgSchema }),
        },
        'webhooks',
      );
      try {
        const rows = (await opened.store.webhooks?.readDeliveries(null, taskId)) ?? [];
        if (flags.json) process.stdout.write(`${JSON.stringify(rows.map(redacted), null, 2)}\n`);
        else process.stdout.write(render(taskId, rows));
        process.exitCode = rows.length === 0 ? 1 : 0;
      } finally {
        await opened.close();
      }
    });
}

/** The secret stays in the database. */
function redacted(row: DeliveryRecord): Omit<DeliveryRecord, 'secret'> {
  const { secret: _secret, ...rest } = row;
  return rest;
}

function iso(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

function render(taskId: string, rows: readonly DeliveryRecord[]): string {
  if (rows.length === 0) return `task ${taskId} has no webhook deliveries (no webhooks, or swept)\n`;
  const lines = [`webhook deliveries of task ${taskId}:`];
  for (const row of rows) {
    const next = row.state === 'pending' ? `, next attempt ${iso(row.nextAt)}` : `, ${row.state} ${iso(row.doneAt)}`;
    lines.push(
      `  msg_${row.taskId}_${row.seq}  ${row.status} -> ${row.url}  ${row.state}, ${row.attempts} attempt(s)${next}`,
    );
    for (const a of row.attemptLog) {
      const answer = a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`;
      lines.push(
        `    #${a.attempt} ${iso(a.at)} ${a.node}: ${answer}${a.error === null ? '' : ` (${a.error})`}, ${a.durationMs} ms`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
