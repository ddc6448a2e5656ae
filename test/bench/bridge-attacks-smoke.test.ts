/**
 * Keeps bench/bridge-attacks.ts from rotting: one short round must measure every phase (the
 * observer's tools/list and fast call, the attacker's requests), with finite numbers and no failed
 * observer request, and render its table. Timings are never asserted: this machine is shared.
 * It runs the built CLI (`npm run build` first).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PHASES, renderAttacks, runBridgeAttacks } from '../../bench/bridge-attacks.js';
import { assertBuilt } from '../cli/helpers.js';

beforeAll(() => assertBuilt());

describe('bench/bridge-attacks.ts', () => {
  it('measures another host through every attack and renders the table', { timeout: 300_000 }, async () => {
    const report = await runBridgeAttacks({ rounds: 1, seconds: 2 }, () => undefined);
    expect(report.rows.map((r) => r.phase)).toEqual([...PHASES]);
    for (const row of report.rows) {
      expect(row.list.samples, row.phase).toBeGreaterThan(0);
      expect(row.call.samples, row.phase).toBeGreaterThan(0);
      for (const value of [row.list.p50, row.list.p99, row.call.p50, row.call.p99, ...Object.values(row.ratio)]) {
        expect(Number.isFinite(value), `${row.phase} ${value}`).toBe(true);
      }
      expect(row.failures, row.phase).toBe(0);
      if (row.phase !== 'idle') expect(row.attacks, row.phase).toBeGreaterThan(0);
    }
    const table = renderAttacks(report);
    expect(table.split('\n').filter((line) => line.startsWith('| '))).toHaveLength(PHASES.length + 2);
    expect(table).toMatch(/load average \d/);
  });
});
