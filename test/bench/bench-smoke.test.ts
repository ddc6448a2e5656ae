/**
 * Keeps the benchmark harness from rotting: a `--quick` run (tiny counts, one round, no PostgreSQL)
 * must produce every figure with finite numbers, every target, and a table that renders. Timings
 * are never asserted: this machine is shared and noisy. Figure 10 runs the built CLI (`npm run
 * build` first, as `.ci/run` does).
 */
import { describe, expect, it } from 'vitest';
import { runBench } from '../../bench/main.js';
import { parseConfig } from '../../bench/lib/config.js';
import { renderMarkdown } from '../../bench/lib/report.js';

describe('bench --quick', () => {
  it('measures every figure and renders the table', { timeout: 600_000 }, async () => {
    const config = parseConfig(['--quick', '--no-postgres']);
    const report = await runBench(config, () => undefined);

    expect(report.machine.cores).toBeGreaterThan(0);
    expect(Number.isFinite(report.machine.fsyncPerSecond.median)).toBe(true);
    for (const figure of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]) {
      const rows = report.rows.filter((r) => r.figure === figure);
      expect(rows.length, `figure ${figure}`).toBeGreaterThan(0);
      expect(
        rows.some((r) => r.value !== undefined),
        `figure ${figure} has a measured row`,
      ).toBe(true);
    }
    for (const row of report.rows) {
      if (row.value === undefined) {
        expect(row.notRun, `${row.metric} ${row.variant}`).toBeTruthy();
        continue;
      }
      expect(Number.isFinite(row.value.median), `${row.metric} ${row.variant} ${row.setting}`).toBe(true);
      expect(row.value.min).toBeLessThanOrEqual(row.value.max);
      if (row.ratio !== undefined) expect(Number.isFinite(row.ratio.value), `${row.metric} ratio`).toBe(true);
    }
    expect(
      report.rows.filter((r) => r.variant.startsWith('ours PostgreSQL')).every((r) => r.notRun !== undefined),
    ).toBe(true);
    // Issue 14: the floor (a minimal durable node:http + better-sqlite3 server) is measured beside
    // ours and B0 in the request figures, and only there.
    const floorFigures = new Set(
      report.rows.filter((r) => r.variant.startsWith('floor') && r.value !== undefined).map((r) => r.figure),
    );
    expect([...floorFigures].sort((a, b) => a - b)).toEqual([1, 2, 5, 8]);
    // Issue 14's "ours through the SDK" row beside the fast path, over HTTP.
    expect(
      report.rows.some((r) => r.figure === 8 && r.variant.includes('through the SDK') && r.value !== undefined),
    ).toBe(true);
    // Every issue-14 target, on SQLite judged with a finite ratio, on PostgreSQL present and (with
    // --no-postgres) not measured, saying why.
    for (const name of [
      'tasks/get, HTTP, 16 clients, req/s (DB, fast path) vs B0',
      'tasks/get, HTTP, 16 clients, req/s (DB, fast path) vs floor',
      'tasks/get, HTTP, 1 client, p50 (DB, fast path) vs B0',
      'tasks/get, stdio, 16 clients, req/s (DB) vs B0',
      'durable tools/call creating a task, HTTP, 16 clients (DB) vs B0',
      `tasks/get p99, polled every 5 ms, ${config.openTasks.at(-1)!.toLocaleString('en-US')} open (DB) vs B0`,
      `claim at ${config.claimOpen.at(-1)!.toLocaleString('en-US')} open vs ${config.claimOpen[0]!.toLocaleString('en-US')} (DB)`,
      "another caller's tasks/get p99 with 16 CPU-bound handlers, --workers 2 (DB) vs idle",
    ]) {
      const sqlite = report.targets.filter((t) => t.name === name.replace('DB', 'SQLite'));
      expect(sqlite, name).toHaveLength(1);
      expect(typeof sqlite[0]!.met, `${name}: ${sqlite[0]!.margin}`).toBe('boolean');
      expect(sqlite[0]!.issue, name).toBe(14);
      expect(Number.isFinite(sqlite[0]!.measured), name).toBe(true);
      const postgres = report.targets.filter((t) => t.name === name.replace('DB', 'PostgreSQL'));
      expect(postgres, name).toHaveLength(1);
      expect(postgres[0]!.met, name).toBeUndefined();
      expect(postgres[0]!.margin, name).toContain('not measured: disabled with --no-postgres');
    }
    // Issue 31: figures 12 (the job queues) and 13 (several nodes) run on PostgreSQL only: here
    // every row says why it did not run, their targets are present and not measured, and the
    // SQLite create target of figure 1 is judged.
    for (const figure of [12, 13]) {
      const rows = report.rows.filter((r) => r.figure === figure);
      expect(rows.length, `figure ${figure}`).toBeGreaterThan(0);
      for (const row of rows)
        expect(row.notRun, `${row.metric} ${row.variant}`).toContain('disabled with --no-postgres');
    }
    const issue31 = report.targets.filter((t) => t.issue === 31);
    expect(issue31.length).toBe(6);
    for (const target of issue31) {
      if (target.name.includes('SQLite')) expect(typeof target.met, target.name).toBe('boolean');
      else expect(target.margin, target.name).toContain('not measured: disabled with --no-postgres');
    }
    expect(report.machine.load).toMatch(/^(taskset|not pinned)/);
    expect(report.figureSeconds?.every((f) => Number.isFinite(f.seconds))).toBe(true);
    // Every target of issue 7 is judged (met, missed, or missed as not measurable with a reason).
    const names = report.targets.map((t) => t.name).join('\n');
    for (const name of [
      'durable submissions',
      'tasks/get p99',
      'completion-to-acceptance',
      'polls per task',
      'recovery',
    ]) {
      expect(names).toContain(name);
    }
    expect(report.rows.find((r) => r.figure === 7 && r.variant.startsWith('B0'))?.value?.median).toBe(
      config.recovery[0],
    );

    const table = renderMarkdown(report);
    for (const heading of [
      '## Targets of issue 7',
      '## Targets of issue 14',
      '## Targets of issue 31',
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((f) => `## ${f}.`),
    ]) {
      expect(table).toContain(heading);
    }
    expect(table).not.toMatch(/NaN/);
  });
});
