import { describe, expect, it } from 'vitest';
import { formatGate, gateReport } from '../../src/sim/gate.js';
import { runPool } from '../../src/sim/pool.js';

describe('smoke gate', () => {
  it('500 seeded series on two worker threads pass the gate with every fault class and ledger state covered', async () => {
    const started = performance.now();
    const seeds = Array.from({ length: 500 }, (_, i) => i + 1);
    const summaries = await runPool({ seeds, workers: 2 });
    const report = gateReport(summaries, performance.now() - started);
    const table = formatGate(report);
    const failing = report.failing
      .slice(0, 5)
      .map(
        (s) =>
          `seed ${s.seed}: ${s.violations.map((v) => `${v.invariant} ${v.detail}`).join('; ')} (replay: terminus gate --seed ${s.seed} --series 1)`,
      );
    expect(
      report.rows.filter((r) => r.figure.startsWith('coverage')).every((r) => r.pass),
      table,
    ).toBe(true);
    expect(report.pass, `${table}\n${failing.join('\n')}`).toBe(true);
  }, 600_000);
});
