/**
 * Servers that misbehave (C13), on virtual time: swarm series restricted to the misbehaviours (a
 * completed task rewritten to `cancelled`, a result that changes between reads, a terminal task
 * reported `working` again, a completion shown after the cancel won), with executor crashes so a
 * restarted executor reconciles what it had left in doubt. Every checker holds, and the executor
 * records the contradictions: UNKNOWN for those found before a receipt, EFFECT_RECONCILIATION_REQUIRED
 * for a completion reported after the cancelled receipt. On every wire, with the lies that can be
 * heard there (`notApplicable` says which cannot, and why).
 */
import { describe, expect, it } from 'vitest';
import type { FaultClass } from '../../src/sim/faults.js';
import { MISBEHAVIOURS } from '../../src/sim/network/misbehave.js';
import { runSeries } from '../../src/sim/series.js';
import { simWire, type SimWireName } from '../../src/sim/wires/index.js';

const FAULTS: readonly FaultClass[] = [...MISBEHAVIOURS, 'executor_crash'];
const SERIES = 150;
const WIRES: readonly SimWireName[] = ['mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'];
const HEARD_BEFORE_RECEIPT: readonly SimWireName[] = ['mcp-tasks-ext', 'mcp-2025-11-25', 'aip-151'];

describe.each(WIRES)('servers that misbehave (C13) on %s', (wire) => {
  const told = MISBEHAVIOURS.filter((lie) => simWire(wire).notApplicable[lie] === undefined);

  it(`${SERIES} series: every lie told there fires, no checker fails, the contradictions are recorded`, async () => {
    const fired = new Map<string, number>();
    const states = new Map<string, number>();
    const failing: string[] = [];
    let contradictions = 0;
    for (let seed = 1; seed <= SERIES; seed++) {
      const outcome = await runSeries({ seed, wire, faults: FAULTS });
      for (const v of outcome.violations)
        failing.push(
          `seed ${seed}: ${v.invariant} ${v.detail} (replay: terminus gate --wire ${wire} --seed ${seed} --series 1 --faults ${FAULTS.join(',')})`,
        );
      for (const [f, n] of Object.entries(outcome.faultsFired)) fired.set(f, (fired.get(f) ?? 0) + (n ?? 0));
      for (const [s, n] of Object.entries(outcome.statesReached)) states.set(s, (states.get(s) ?? 0) + n);
      contradictions += outcome.metrics.contradictions ?? 0;
    }
    expect(failing).toEqual([]);
    expect(told).toContain('late_completion_shown');
    for (const lie of told) expect(fired.get(lie) ?? 0, lie).toBeGreaterThanOrEqual(3);
    // A contradiction found before a receipt needs a lie told to a read after the terminal one: on
    // the wires whose status read carries the result, read again by the fetch, and on 2025-11-25 a
    // status or cancel answer naming another terminal status than the side channel's final answer.
    // SEP-1391 has no such read: there a contradiction would be a false one.
    if (HEARD_BEFORE_RECEIPT.includes(wire)) {
      expect(contradictions).toBeGreaterThan(0);
      expect(states.get('UNKNOWN') ?? 0).toBeGreaterThanOrEqual(contradictions);
    } else expect(contradictions).toBe(0);
    expect(states.get('EFFECT_RECONCILIATION_REQUIRED') ?? 0).toBeGreaterThan(0);
  }, 600_000);
});
