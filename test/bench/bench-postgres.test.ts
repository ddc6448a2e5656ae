/**
 * Issue 31: the PostgreSQL figures of the bench, 12 (ours against pg-boss and graphile-worker) and
 * 13 (several nodes, a kill -9), at `--quick` size on the test database: every row measured with
 * finite numbers, every target judged, the table renders. Timings are never asserted; what is
 * asserted is what must hold on any machine: no double claim, every orphan of the killed node run
 * again, result reads that found each job done.
 */
import { describe, expect, it } from 'vitest';
import { runBench } from '../../bench/main.js';
import { parseConfig } from '../../bench/lib/config.js';
import { renderMarkdown } from '../../bench/lib/report.js';
import { failWithoutDatabase, PG_URL } from '../store/postgres-fixture.js';

if (PG_URL === '') {
  describe('bench --quick, PostgreSQL figures', failWithoutDatabase);
} else {
  describe('bench --quick, PostgreSQL figures', () => {
    it('figures 12 and 13 measure every row and judge every target', { timeout: 300_000 }, async () => {
      const config = parseConfig(['--quick', '--figures', '12,13']);
      const report = await runBench(config, () => undefined);

      const queues = report.rows.filter((r) => r.figure === 12);
      for (const variant of [
        'pg-boss',
        'graphile-worker',
        'ours PostgreSQL, engine API',
        'ours PostgreSQL, tools/call',
      ]) {
        for (const producers of config.queueProducers) {
          const rows = queues.filter(
            (r) => r.variant.startsWith(variant) && r.setting.startsWith(`${producers} producer`),
          );
          expect(rows.map((r) => r.metric).sort(), `${variant} at ${producers}`).toEqual([
            'add-to-start p50 (ms)',
            'add-to-start p99 (ms)',
            'jobs/s',
          ]);
          for (const row of rows) {
            expect(Number.isFinite(row.value?.median), `${row.metric} ${variant} ${producers}`).toBe(true);
          }
        }
      }
      expect(queues.filter((r) => r.metric.startsWith('limit:')).every((r) => Number.isFinite(r.value?.median))).toBe(
        true,
      );
      expect(queues.find((r) => r.metric.startsWith('limit:'))?.setting).toContain('synchronous_commit=on');

      const cluster = report.rows.filter((r) => r.figure === 13);
      for (const row of cluster) expect(Number.isFinite(row.value?.median), row.metric).toBe(true);
      expect(cluster.find((r) => r.metric === 'double claims')?.value?.median).toBe(0);
      expect(cluster.find((r) => r.metric === 'orphaned tasks')?.value?.median).toBeGreaterThan(0);

      const targets = report.targets.filter((t) => t.issue === 31);
      expect(targets).toHaveLength(5);
      for (const target of targets) expect(typeof target.met, `${target.name}: ${target.margin}`).toBe('boolean');
      const table = renderMarkdown(report);
      for (const heading of ['## Targets of issue 31', '## 12.', '## 13.']) expect(table).toContain(heading);
      expect(table).not.toMatch(/NaN/);
    });

    // Issue 31: where a PostgreSQL target is out of reach, the limit that binds is measured in the
    // same run: the floor (bench/servers/floor.ts) on the same PostgreSQL, named in each target.
    it(
      'figures 2 and 8 measure the floor on PostgreSQL and name it in the PostgreSQL read targets',
      { timeout: 300_000 },
      async () => {
        const config = parseConfig(['--quick', '--figures', '2,8']);
        const report = await runBench(config, () => undefined);

        const floor = report.rows.filter(
          (r) => r.variant.startsWith('floor: node:http + pg') || r.variant === 'floor on PostgreSQL',
        );
        expect(new Set(floor.map((r) => r.figure))).toEqual(new Set([2, 8]));
        for (const row of floor) expect(Number.isFinite(row.value?.median), `${row.metric} ${row.setting}`).toBe(true);
        const reads = report.targets.filter(
          (t) => /PostgreSQL/.test(t.name) && /tasks\/get/.test(t.name) && !/vs floor/.test(t.name),
        );
        expect(reads.map((t) => t.name).sort()).toEqual([
          'tasks/get p99, polled every 5 ms, 200 open (PostgreSQL) vs B0',
          'tasks/get, HTTP, 1 client, p50 (PostgreSQL, fast path) vs B0',
          'tasks/get, HTTP, 16 clients, req/s (PostgreSQL, fast path) vs B0',
          'tasks/get, stdio, 16 clients, req/s (PostgreSQL) vs B0',
        ]);
        for (const target of reads) expect(target.margin, target.name).toMatch(/the floor on PostgreSQL: [\d.,]+/);
        expect(renderMarkdown(report)).not.toMatch(/NaN/);
      },
    );
  });
}
