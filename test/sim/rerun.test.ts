/**
 * The CLI's re-run by arguments as a series behaviour (issue 17 item 4): operations run as
 * `terminus call` runs them derive their call node from the command, are run again while in flight
 * (the CLI's `chooseCallNode` must attach: no second operation, C5) and once more after they
 * settled (it must take the next generation).
 */
import { describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { newOperation } from '../../src/executor/operation.js';
import { FAULT_CLASSES } from '../../src/sim/faults.js';
import { commandNode, rerun } from '../../src/sim/client/rerun.js';
import { isScripted, swarmPlan } from '../../src/sim/plan.js';
import { seriesRandom } from '../../src/sim/random.js';
import { runSeries } from '../../src/sim/series.js';
import { drawWorkload, withEdges, type OperationPlan } from '../../src/sim/workload.js';
import { forWire } from '../../src/sim/wires/series.js';
import { simWire, type SimWireName } from '../../src/sim/wires/index.js';

function commands(seed: number): OperationPlan[] {
  const random = seriesRandom(seed);
  const drawn = drawWorkload(random.workload, seed);
  const plan = swarmPlan(drawn, random.faults, FAULT_CLASSES);
  const partitioned = plan.rules.filter((r) => r.fault === 'not_found_after_expiry').map((r) => r.op ?? '');
  return withEdges(drawn, seed, new Set(partitioned)).filter((op) => op.rerun != null);
}

describe('re-run by arguments in the series', () => {
  it('series whose calls are re-run as commands pass every checker (attach in flight, next generation after)', async () => {
    const seeds = Array.from({ length: 300 }, (_, i) => i + 1).filter((s) => !isScripted(s) && commands(s).length > 0);
    expect(seeds.length).toBeGreaterThan(5);
    for (const seed of seeds.slice(0, 12)) {
      const ops = commands(seed);
      // The node is the one `terminus call` derives from the command (server, tool, arguments).
      for (const op of ops) expect(op.callNodeId).toBe(commandNode(op));
      const outcome = await runSeries({ seed });
      expect(outcome.violations, `seed ${seed}`).toEqual([]);
    }
  }, 300_000);

  it('names C5 when the command would not attach to its in-flight operation', async () => {
    const op = commands(
      Array.from({ length: 300 }, (_, i) => i + 1).find((s) => !isScripted(s) && commands(s).length > 0)!,
    )[0]!;
    const ledger = openSqliteLedger({ path: ':memory:' });
    const base = commandNode(op);
    const record = (callNodeId: string, id: string) =>
      newOperation({
        id,
        callNodeId,
        requestDigest: 'd',
        tool: { name: op.tool, descriptorVersion: '1' },
        body: { ...op.args },
        wire: { name: 'mcp-tasks-ext', adapterVersion: 'tasks-ext-client/1' },
        submissionKey: `k-${id}`,
        executionEpoch: 0,
        now: 1_000,
        budgetMs: null,
      });
    try {
      expect(await rerun(ledger, op)).toEqual({ submit: base });
      await ledger.create(record(base, 'op-1'));
      expect(await rerun(ledger, op)).toEqual({ submit: base });
      // A later generation in flight too (a `--new` run): the CLI attaches to the newest, not this one.
      await ledger.create({ ...record(`${base}.2`, 'op-2'), createdAt: 2_000 });
      const wrong = await rerun(ledger, op);
      expect(wrong.submit).toBeNull();
      expect(wrong.violation?.invariant).toBe('C5');
    } finally {
      await ledger.close();
    }
  });

  // Re-runs by arguments on the wires whose client answers no input rounds (issue 17 item 1): the
  // workload drops `ask` there, and a command's node must follow the arguments it then runs with.
  for (const wire of ['sep-1391', 'aip-151'] as const satisfies readonly SimWireName[]) {
    const onWire = (seed: number): OperationPlan[] => forWire(simWire(wire), commands(seed));
    const seeds = Array.from({ length: 300 }, (_, i) => i + 1).filter((s) => !isScripted(s) && onWire(s).length > 0);

    it(`${wire}: re-run series pass every checker (seeds 5, 6, 22, 45 counted a second task before)`, async () => {
      expect(seeds.slice(0, 12)).toEqual(expect.arrayContaining([5, 6, 22, 45]));
      for (const seed of seeds.slice(0, 12)) {
        for (const op of onWire(seed)) expect(op.callNodeId).toBe(commandNode(op));
        const outcome = await runSeries({ seed, wire });
        expect(outcome.violations, `seed ${seed}`).toEqual([]);
      }
    }, 300_000);

    it(`${wire}: a re-run that starts the next generation while the first is in flight is caught as C5`, async () => {
      // A broken CLI: no attach, always a new generation (as \`--new\` would). It reports nothing
      // itself; the server's second task for the command is what the checkers find.
      const broken = async (_ledger: unknown, op: OperationPlan) => ({ submit: `${commandNode(op)}.2` });
      const caught: string[] = [];
      for (const seed of seeds.slice(0, 4)) {
        const outcome = await runSeries({ seed, wire, hooks: { rerun: broken } });
        for (const v of outcome.violations) if (v.invariant === 'C5') caught.push(v.detail);
      }
      expect(caught.length).toBeGreaterThan(0);
      expect(caught.every((d) => d.includes('server tasks for one call node'))).toBe(true);
    }, 300_000);
  }
});
