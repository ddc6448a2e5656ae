import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/ports.js';
import type { InputReply, TaskContext } from '../../src/runner/tool.js';
import { analyzeCsvTool } from '../../src/tools/demo/analyze-csv.js';
import { buildReportTool } from '../../src/tools/demo/build-report.js';
import { ensureSampleCsv, parseCsvLine } from '../../src/tools/demo/csv.js';
import { migrateTool } from '../../src/tools/demo/migrate.js';
import { runTestsTool } from '../../src/tools/demo/run-tests.js';

/** The demo tools' real work, checkpoints and resumption, with a recording context. */
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-demo-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function context(options: { lastCheckpoint?: unknown; reply?: InputReply; signal?: AbortSignal } = {}) {
  const checkpoints: unknown[] = [];
  const progress: { done: number; total?: number }[] = [];
  const lines: { stream: 'log' | 'output'; text: string; fields?: Record<string, unknown> }[] = [];
  const ctx: TaskContext = {
    taskId: 'demo-task',
    signal: options.signal ?? new AbortController().signal,
    attempt: options.lastCheckpoint === undefined ? 1 : 2,
    epoch: 1,
    lastCheckpoint: options.lastCheckpoint,
    logger: silentLogger,
    progress: async (done, total) => {
      progress.push({ done, ...(total === undefined ? {} : { total }) });
    },
    checkpoint: async (data) => {
      checkpoints.push(structuredClone(data));
    },
    requestInput: async () => options.reply ?? { action: 'cancel' },
    log: async (text, fields) => {
      lines.push({ stream: 'log', text, ...(fields === undefined ? {} : { fields }) });
    },
    output: async (text) => {
      lines.push({ stream: 'output', text });
    },
  };
  return { ctx, checkpoints, progress, lines };
}

describe('csv helpers', () => {
  it('parses quoted fields with commas and doubled quotes', () => {
    expect(parseCsvLine('a,"b,c","d ""e""",')).toEqual(['a', 'b,c', 'd "e"', '']);
  });
});

describe('analyze_csv', () => {
  it('streams a generated sample and returns column statistics', async () => {
    const tool = analyzeCsvTool(dir);
    const { ctx } = context();
    const result = await tool.handler({ sampleRows: 2000 }, ctx);
    const stats = result.structuredContent as { rows: number; columns: { name: string; min?: number; max?: number }[] };
    expect(stats.rows).toBe(2000);
    expect(stats.columns.map((c) => c.name)).toEqual(['id', 'city', 'amount', 'quantity', 'ok']);
    expect(stats.columns[0]).toMatchObject({ min: 1, max: 2000 });
  });

  it('a re-run from a mid-file checkpoint counts every row exactly once', async () => {
    const tool = analyzeCsvTool(dir);
    const full = context();
    const whole = await tool.handler({ sampleRows: 300_000 }, full.ctx);
    const mid = full.checkpoints[0] as { offset: number };
    expect(mid.offset).toBeGreaterThan(0);
    expect(mid.offset).toBeLessThan((whole.structuredContent as { bytes: number }).bytes);
    const resumed = context({ lastCheckpoint: mid });
    const again = await tool.handler({ sampleRows: 300_000 }, resumed.ctx);
    expect(again.structuredContent).toEqual(whole.structuredContent);
    expect((resumed.progress[0] as { done: number }).done).toBeGreaterThan(0);
  });

  it('stops when its signal aborts', async () => {
    const abort = new AbortController();
    abort.abort(new Error('cancelled'));
    const { ctx } = context({ signal: abort.signal });
    await expect(analyzeCsvTool(dir).handler({ sampleRows: 2000 }, ctx)).rejects.toThrow('cancelled');
  });
});

describe('build_report', () => {
  it('builds every section, checkpointing after each, and resumes at the first unfinished one', async () => {
    const full = context();
    const whole = await buildReportTool.handler({ title: 'T', sections: 3, sectionSeconds: 0 }, full.ctx);
    expect(full.checkpoints).toHaveLength(3);
    expect((whole.structuredContent as { sections: unknown[] }).sections).toHaveLength(3);

    const resumed = context({ lastCheckpoint: full.checkpoints[1] });
    const rest = await buildReportTool.handler({ title: 'T', sections: 3, sectionSeconds: 0 }, resumed.ctx);
    expect(resumed.checkpoints).toHaveLength(1);
    expect((rest.structuredContent as { sections: unknown[] }).sections).toEqual(
      (whole.structuredContent as { sections: unknown[] }).sections,
    );
  });

  it('honours the abort signal inside a long section', async () => {
    const abort = new AbortController();
    const { ctx, progress } = context({ signal: abort.signal });
    const run = buildReportTool.handler({ title: 'T', sections: 2, sectionSeconds: 3600 }, ctx);
    while (progress.length === 0) await new Promise((r) => setTimeout(r, 5));
    abort.abort(new Error('stop now'));
    await expect(run).rejects.toThrow('stop now');
  });
});

describe('migrate', () => {
  it('changes nothing when the user does not confirm', async () => {
    const { ctx, checkpoints } = context({ reply: { action: 'decline' } });
    const result = await migrateTool(dir).handler({ table: 'orders', rows: 1000 }, ctx);
    expect((result.content[0] as { text: string }).text).toContain('not confirmed');
    expect(checkpoints).toEqual([]);
  });

  it('after confirmation writes every row once, also when re-run from a checkpoint', async () => {
    const tool = migrateTool(dir);
    await ensureSampleCsv(join(dir, 'sample-50000.csv'), 50_000);
    const full = context({ reply: { action: 'accept', content: { confirm: true } } });
    const first = await tool.handler({ table: 'orders', rows: 50_000 }, full.ctx);
    const dest = (first.structuredContent as { dest: string }).dest;
    expect(readFileSync(dest, 'utf8').trim().split('\n')).toHaveLength(50_000);
    expect(full.checkpoints.length).toBeGreaterThanOrEqual(2);

    // A crash after the first batch: the re-run truncates the output to that checkpoint and continues.
    const resumed = context({
      reply: { action: 'accept', content: { confirm: true } },
      lastCheckpoint: full.checkpoints[0],
    });
    await tool.handler({ table: 'orders', rows: 50_000 }, resumed.ctx);
    const lines = readFileSync(dest, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(50_000);
    expect(new Set(lines.map((l) => (JSON.parse(l) as { id: string }).id)).size).toBe(50_000);
  });
});

describe('run_tests', () => {
  it('logs each result as it goes (FAIL lines with fields) and returns the summary', async () => {
    const { ctx, lines, checkpoints } = context();
    const result = await runTestsTool.handler({ count: 10, failEvery: 4, pauseMs: 0 }, ctx);
    expect(lines.map((l) => l.text)).toEqual([
      'running 10 tests',
      'PASS test_001',
      'PASS test_002',
      'PASS test_003',
      'FAIL test_004: expected 4, got 5',
      'PASS test_005',
      'PASS test_006',
      'PASS test_007',
      'FAIL test_008: expected 3, got 4',
      'PASS test_009',
      'PASS test_010',
      '10 tests: 8 passed, 2 failed',
    ]);
    expect(lines[4]?.fields).toEqual({ test: 'test_004', expected: 4, got: 5, status: 'fail' });
    expect(lines.at(-1)?.stream).toBe('output');
    expect(result.structuredContent).toMatchObject({ count: 10, passed: 8, failed: 2 });
    expect(checkpoints).toHaveLength(10);
  });

  it('a re-run from a checkpoint says where it resumes and runs only the rest', async () => {
    const { ctx, lines } = context({
      lastCheckpoint: { next: 9, passed: 6, failures: [{ test: 'test_004', expected: 4, got: 5 }] },
    });
    const result = await runTestsTool.handler({ count: 10, failEvery: 4, pauseMs: 0 }, ctx);
    expect(lines.map((l) => l.text)).toEqual([
      'resuming at test_009 (attempt 2)',
      'PASS test_009',
      'PASS test_010',
      '10 tests: 8 passed, 1 failed',
    ]);
    expect(result.structuredContent).toMatchObject({ passed: 8, failed: 1 });
  });

  it('stops when cancelled, mid-test', async () => {
    const abort = new AbortController();
    const { ctx, lines } = context({ signal: abort.signal });
    const run = runTestsTool.handler({ count: 100, failEvery: 0, pauseMs: 60_000 }, ctx);
    setTimeout(() => abort.abort(new Error('cancelled')), 20);
    await expect(run).rejects.toThrow();
    expect(lines.map((l) => l.text)).toEqual(['running 100 tests']);
  });
});
