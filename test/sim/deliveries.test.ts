/**
 * Webhook deliveries and event readers in the simulation (issue 32): the real delivery loop runs
 * on each server node's virtual clock over the store's real outbox, posting to a receiver that is
 * down for minutes, loses, doubles and delays POSTs; a reader of every operation's ordered events
 * (the real `executor.events()`) is cut after events and resumes from its cursor. Every terminal
 * state is delivered at least once by its webhook-id, no reader sees an event twice or skips one,
 * and a delivery loop that drops a row or a reader that forgets its cursor fails the gate, named.
 */
import { describe, expect, it } from 'vitest';
import { DELIVERY_BROKEN_VARIANTS } from '../../src/sim/delivery/variants.js';
import { DELIVERY_FAULT_CLASSES } from '../../src/sim/faults.js';
import { gateReport } from '../../src/sim/gate.js';
import { runSeries } from '../../src/sim/series.js';
import { summarize, type SeriesSummary } from '../../src/sim/summary.js';
import { SIM_WIRES, simWire } from '../../src/sim/wires/index.js';

const MAX_SEEDS = 120;

describe('webhook and event-reader faults: the checkers hold on the real loop and reader', () => {
  it.each(SIM_WIRES)(
    '%s: 80 series with only these faults: each class that applies fires, deliveries arrive, no violation',
    async (wire) => {
      const summaries: SeriesSummary[] = [];
      const fired = new Map<string, number>();
      let received = 0;
      let resumed = 0;
      let done = 0;
      for (let seed = 1; seed <= 80; seed++) {
        const outcome = await runSeries({ seed, wire, faults: DELIVERY_FAULT_CLASSES, keepTrace: true });
        summaries.push(summarize(outcome));
        for (const [f, n] of Object.entries(outcome.faultsFired)) fired.set(f, (fired.get(f) ?? 0) + (n ?? 0));
        received += outcome.trace.filter((e) => e.who === 'receiver').length;
        const reader = outcome.trace.filter((e) => e.who === 'reader').map((e) => e.what);
        resumed += reader.filter((t) => t.includes(' resumes after ')).length;
        done += reader.filter((t) => t.includes(': done at ')).length;
        expect(outcome.violations, `seed ${seed}: ${JSON.stringify(outcome.violations)}`).toEqual([]);
      }
      const applicable = DELIVERY_FAULT_CLASSES.filter((f) => simWire(wire).notApplicable[f] === undefined);
      for (const f of applicable) expect(fired.get(f) ?? 0, f).toBeGreaterThan(0);
      expect(received).toBeGreaterThan(20);
      if (applicable.includes('event_stream_cut')) {
        // Readers were cut and resumed from their cursors, and read their tasks to the end.
        expect(resumed).toBeGreaterThan(0);
        expect(done).toBeGreaterThan(10);
      }
      expect(gateReport(summaries, 0, wire).pass).toBe(true);
    },
    300_000,
  );

  for (const variant of DELIVERY_BROKEN_VARIANTS) {
    it(`${variant.name} fails the gate on ${variant.breaks}`, async () => {
      const broken: SeriesSummary[] = [];
      let caught: number | null = null;
      for (let seed = 1; seed <= MAX_SEEDS && caught === null; seed++) {
        const summary = summarize(await runSeries({ seed, faults: variant.faults, hooks: variant.hooks }));
        broken.push(summary);
        if (summary.violations.some((v) => v.invariant === variant.breaks)) caught = seed;
      }
      expect(caught, `${variant.name} was never caught`).not.toBeNull();
      const report = gateReport(broken, 0);
      expect(report.pass).toBe(false);
      expect(report.rows.find((r) => r.figure === `${variant.breaks} violations`)?.pass).toBe(false);
      // The same seed with the real loop and reader breaks nothing: the hook is what broke it.
      const real = await runSeries({ seed: caught as number, faults: variant.faults });
      expect(real.violations.filter((v) => v.invariant === variant.breaks)).toEqual([]);
    }, 300_000);
  }
});
