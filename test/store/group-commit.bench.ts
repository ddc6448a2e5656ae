/**
 * Measures what group commit buys on a real file (synchronous=FULL, WAL): N concurrent creates
 * with the default batching vs `maxBatch: 1` (one transaction, hence one fsync, per create).
 * Not a vitest file: run with `npx tsx test/store/group-commit.bench.ts [count] [rounds] [maxBatch,...]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { requestDigest } from '../../src/core/digest.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';

const count = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'terminus-bench-'));

async function run(label: string, maxBatch: number, round: number): Promise<{ perSecond: number; maxBlockMs: number }> {
  const store = await openSqliteTaskStore({ path: join(dir, `${label}-${round}.db`), maxBatch });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      store.create({
        id: `t-${i}`,
        owner: 'alice',
        tool: 'report',
        args: { i },
        requestDigest: requestDigest('report', { i }),
        submissionKey: `k-${i}`,
        wire: 'mcp-tasks-ext',
        ttlMs: 3_600_000,
        keepAliveMs: null,
        pollIntervalMs: 1_000,
        now: 1_800_000_000_000 + i,
      }),
    ),
  );
  const seconds = (performance.now() - start) / 1000;
  delay.disable();
  await store.close();
  return { perSecond: count / seconds, maxBlockMs: delay.max / 1e6 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const batches = (process.argv[4] ?? '512,1').split(',').map(Number);
for (const maxBatch of batches) {
  const label = maxBatch === 1 ? 'one-tx-per-create' : `batch<=${maxBatch}`;
  const results = [];
  for (let round = 0; round < rounds; round += 1) results.push(await run(label, maxBatch, round));
  const perSecond = median(results.map((r) => r.perSecond));
  const block = median(results.map((r) => r.maxBlockMs));
  process.stdout.write(
    `${label.padEnd(18)} ${count} creates: median ${perSecond.toFixed(0)} creates/s, max event-loop block ${block.toFixed(1)} ms\n`,
  );
}
rmSync(dir, { recursive: true, force: true });
