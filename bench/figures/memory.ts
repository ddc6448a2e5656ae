/**
 * Figure 6: heap growth and bytes on disk per open task (at `memoryOpen` open tasks) and per ledger
 * entry, each measured in a fresh process (`memory-probe.ts`, `--expose-gc`). Heap and disk
 * footprints are deterministic to a few percent, so one measurement per variant is taken.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { entryArgs } from '../lib/entries.js';
import { ROOT } from '../lib/proc.js';
import { type Row, type Target } from '../lib/report.js';
import { summarize } from '../lib/stats.js';
import type { FigureContext, FigureResult } from './context.js';

const run = promisify(execFile);

interface Probe {
  readonly heapBytesPerItem: number;
  readonly diskBytesPerItem: number;
}

async function probe(args: readonly string[]): Promise<Probe> {
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=4096', ...entryArgs('bench/figures/memory-probe.ts'), ...args],
    { cwd: ROOT, timeout: 30 * 60_000, maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as Probe;
}

export async function runMemory(ctx: FigureContext): Promise<FigureResult> {
  const { config, env } = ctx;
  const rows: Row[] = [];
  const open = config.memoryOpen;
  const setting = `${open.toLocaleString('en-US')} open tasks`;
  let b0Heap = NaN;
  for (const variant of env.variants) {
    if (variant.notRun !== undefined) {
      rows.push({
        figure: 6,
        metric: 'heap bytes per open task',
        variant: variant.label,
        setting,
        notRun: variant.notRun,
      });
      continue;
    }
    ctx.log(`figure 6: ${open} open tasks in ${variant.id}`);
    let result: Probe;
    if (variant.id === 'B0') {
      result = await probe(['b0', String(open)]);
      b0Heap = result.heapBytesPerItem;
    } else {
      const db = env.freshDb(variant.id, 'memory');
      result = await probe(
        db.kind === 'sqlite' ? [variant.id, String(open), db.path] : [variant.id, String(open), db.url, db.schema],
      );
    }
    rows.push({
      figure: 6,
      metric: 'heap bytes per open task',
      variant: variant.label,
      setting,
      value: summarize([result.heapBytesPerItem]),
      ...(variant.id === 'B0' ? {} : { ratio: { to: 'B0', value: result.heapBytesPerItem / b0Heap } }),
      note: variant.id === 'B0' ? 'the whole store lives in the heap' : 'store process heap; open tasks live on disk',
    });
    rows.push({
      figure: 6,
      metric: 'bytes on disk per open task',
      variant: variant.label,
      setting,
      value: summarize([result.diskBytesPerItem]),
      note:
        variant.id === 'B0'
          ? 'nothing on disk: not durable'
          : variant.id === 'sqlite'
            ? 'database + WAL file'
            : 'tables, indexes and TOAST',
    });
  }
  ctx.log(`figure 6: ${config.memoryLedger} ledger entries`);
  const ledger = await probe(['ledger', String(config.memoryLedger), join(env.dir, 'ledger-memory.db')]);
  const ledgerSetting = `${config.memoryLedger.toLocaleString('en-US')} entries, SQLite ledger`;
  rows.push({
    figure: 6,
    metric: 'heap bytes per ledger entry',
    variant: 'our executor',
    setting: ledgerSetting,
    value: summarize([ledger.heapBytesPerItem]),
  });
  rows.push({
    figure: 6,
    metric: 'bytes on disk per ledger entry',
    variant: 'our executor',
    setting: ledgerSetting,
    value: summarize([ledger.diskBytesPerItem]),
    note: 'toolOperation.v1 at SUBMITTING + its key row',
  });
  const targets: Target[] = [];
  return { rows, targets };
}
