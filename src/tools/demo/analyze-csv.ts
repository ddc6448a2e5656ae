import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTaskTool } from '../../runner/tool.js';
import { addValue, newStats, summarize, type ColumnStats } from './column-stats.js';
import { ensureSampleCsv, parseCsvLine } from './csv.js';
import { dataPathSchema, resolveDataPath } from './paths.js';

/** Where a run had got to: resumed from here after a crash, so no line is counted twice. */
interface CsvCheckpoint {
  readonly path: string;
  readonly offset: number;
  readonly rows: number;
  readonly header: string[] | null;
  readonly stats: ColumnStats[];
}

/** One durable checkpoint per 4 MiB read: an fsync'd write each ~40 ms of parsing here. */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;

const args = z.object({
  path: dataPathSchema
    .optional()
    .describe('CSV file below the data folder, relative to it; omitted: a generated sample'),
  sampleRows: z.number().int().min(1).max(20_000_000).default(500_000).describe('rows of the generated sample'),
});

/**
 * `analyze_csv`: streams a CSV file line by line and returns per-column statistics. Progress is the
 * byte offset; each checkpoint stores the offset and the running statistics, so a re-run after a
 * crash continues from the last checkpoint instead of from the first byte.
 */
export function analyzeCsvTool(dataDir: string) {
  return defineTaskTool({
    name: 'analyze_csv',
    title: 'Analyse a CSV file',
    description:
      'Streams a CSV file below the data folder (path relative to it; omitted: a generated sample) and returns per-column ' +
      'statistics: counts, empties, numeric min/max/mean or the number of distinct values.',
    inputSchema: args,
    taskSupport: 'optional',
    pollIntervalMs: 500,
    handler: async ({ path: given, sampleRows }, ctx) => {
      // Only files below the data folder (symlinks followed and checked): never /etc/passwd.
      const path =
        given === undefined ? join(dataDir, `sample-${sampleRows}.csv`) : await resolveDataPath(dataDir, given);
      if (given === undefined) await ensureSampleCsv(path, sampleRows);
      const size = (await stat(path)).size;
      const last = ctx.lastCheckpoint as CsvCheckpoint | undefined;
      let state: CsvCheckpoint = last?.path === path ? last : { path, offset: 0, rows: 0, header: null, stats: [] };
      if (state.offset > 0) ctx.logger.info('resuming csv analysis', { offset: state.offset, rows: state.rows });

      let header = state.header;
      let stats = state.stats;
      let rows = state.rows;
      let offset = state.offset;
      let sinceCheckpoint = 0;
      let carry = Buffer.alloc(0);

      const takeLine = (line: Buffer): void => {
        const text = line.toString('utf8').replace(/\r$/, '');
        if (header === null) {
          header = parseCsvLine(text);
          stats = header.map(newStats);
          return;
        }
        if (text === '') return;
        const fields = parseCsvLine(text);
        stats.forEach((s, i) => addValue(s, fields[i] ?? ''));
        rows++;
      };

      for await (const chunk of createReadStream(path, { start: offset, highWaterMark: 256 * 1024 })) {
        ctx.signal.throwIfAborted();
        const buf = carry.length === 0 ? (chunk as Buffer) : Buffer.concat([carry, chunk as Buffer]);
        let start = 0;
        for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
          takeLine(buf.subarray(start, nl));
          start = nl + 1;
        }
        carry = Buffer.from(buf.subarray(start));
        offset += start;
        sinceCheckpoint += start;
        if (sinceCheckpoint >= CHECKPOINT_BYTES) {
          sinceCheckpoint = 0;
          state = { path, offset, rows, header, stats };
          await ctx.checkpoint(state);
          await ctx.progress(offset, size, `${rows} rows`);
        }
      }
      if (carry.length > 0) takeLine(carry);
      await ctx.progress(size, size, `${rows} rows`);
      const columns = stats.map(summarize);
      return {
        content: [{ type: 'text', text: `${rows} rows, ${columns.length} columns in ${path}` }],
        structuredContent: { path, rows, bytes: size, columns },
      };
    },
  });
}
