import { createReadStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTaskTool } from '../../runner/tool.js';
import { ensureSampleCsv, parseCsvLine } from './csv.js';

/** Source offset and destination length after the last durable batch; both move together. */
interface MigrateCheckpoint {
  readonly sourceOffset: number;
  readonly destBytes: number;
  readonly rows: number;
}

const BATCH_ROWS = 20_000;

const args = z.object({
  table: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,62}$/)
    .default('orders'),
  rows: z.number().int().min(1).max(5_000_000).default(200_000),
});

const confirmSchema = {
  type: 'object',
  properties: { confirm: { type: 'boolean', description: 'Run the migration' } },
  required: ['confirm'],
};

/**
 * `migrate`: asks for confirmation (the task shows `input_required` until the client answers through
 * `tasks/update`), then rewrites a CSV table as JSON Lines in batches. Each batch is flushed, then
 * checkpointed; a re-run truncates the output to the checkpointed length first, so a crash between
 * the write and the checkpoint never duplicates rows.
 */
export function migrateTool(dataDir: string) {
  return defineTaskTool({
    name: 'migrate',
    title: 'Migrate a table',
    description: 'Migrates a CSV table to JSON Lines after asking the user to confirm.',
    inputSchema: args,
    taskSupport: 'required',
    pollIntervalMs: 500,
    handler: async ({ table, rows: total }, ctx) => {
      const source = join(dataDir, `sample-${total}.csv`);
      await ensureSampleCsv(source, total);
      const reply = await ctx.requestInput(confirmSchema, `Migrate ${total} rows of ${table} to JSON Lines?`);
      if (reply.action !== 'accept' || reply.content?.confirm !== true) {
        return { content: [{ type: 'text', text: `Migration of ${table} not confirmed; nothing changed` }] };
      }
      await mkdir(join(dataDir, 'migrated'), { recursive: true });
      const dest = join(dataDir, 'migrated', `${table}-${ctx.taskId}.jsonl`);
      const from = (ctx.lastCheckpoint as MigrateCheckpoint | undefined) ?? { sourceOffset: 0, destBytes: 0, rows: 0 };
      const out = await open(dest, 'a+');
      try {
        await out.truncate(from.destBytes);
        let { sourceOffset, destBytes, rows } = from;
        let header: string[] | null = null;
        let pending: string[] = [];
        let pendingSource = 0;
        const flush = async (): Promise<void> => {
          const data = pending.join('');
          await out.write(data, destBytes);
          await out.sync();
          destBytes += Buffer.byteLength(data);
          sourceOffset += pendingSource;
          rows += pending.length;
          pending = [];
          pendingSource = 0;
          await ctx.checkpoint({ sourceOffset, destBytes, rows } satisfies MigrateCheckpoint);
          await ctx.progress(rows, total, `${rows} rows migrated`);
        };
        // The header is re-read from byte 0 on every run; data lines continue from the checkpoint.
        const headerLine = await readFirstLine(source);
        header = parseCsvLine(headerLine);
        if (sourceOffset === 0) sourceOffset = Buffer.byteLength(headerLine) + 1;
        let carry = '';
        for await (const chunk of createReadStream(source, { start: sourceOffset, encoding: 'utf8' })) {
          ctx.signal.throwIfAborted();
          const lines = (carry + (chunk as string)).split('\n');
          carry = lines.pop() ?? '';
          for (const line of lines) {
            pendingSource += Buffer.byteLength(line) + 1;
            if (line === '') continue;
            const fields = parseCsvLine(line);
            pending.push(`${JSON.stringify(Object.fromEntries(header.map((h, i) => [h, fields[i] ?? null])))}\n`);
            if (pending.length >= BATCH_ROWS) await flush();
          }
        }
        if (pending.length > 0 || pendingSource > 0) await flush();
        return {
          content: [{ type: 'text', text: `Migrated ${rows} rows of ${table} to ${dest}` }],
          structuredContent: { table, rows, dest, bytes: destBytes },
        };
      } finally {
        await out.close();
      }
    },
  });
}

async function readFirstLine(path: string): Promise<string> {
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 4096 })) {
    const nl = (chunk as string).indexOf('\n');
    if (nl !== -1) return (chunk as string).slice(0, nl);
  }
  return '';
}
