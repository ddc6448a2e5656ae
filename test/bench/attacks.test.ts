/**
 * Keeps `bench/attacks.ts` (issue 30) from rotting: a `--quick` round of every attack against the
 * built CLI must end each attack the way the server promises, leave the server answering, and
 * produce finite figures and a table. Timings are never asserted: this machine is shared and noisy.
 */
import { describe, expect, it } from 'vitest';
import { renderAttacks, runAttacks } from '../../bench/attacks.js';

describe('bench/attacks --quick', () => {
  it(
    'runs every attack while another caller measures, and the server outlives each',
    { timeout: 600_000 },
    async () => {
      const results = await runAttacks({ rounds: 1, db: 'sqlite', quick: true, log: () => undefined });
      const outcome = (id: string): string => results.flat().find((r) => r.attack === id)?.outcome ?? 'missing';
      for (const r of results.flat()) {
        expect(r.alive, r.attack).toBe(true);
        expect(r.idle.get.length, r.attack).toBeGreaterThan(0);
        expect(r.under.get.length, r.attack).toBeGreaterThan(0);
        expect(r.under.call.length, r.attack).toBe(r.under.get.length);
        for (const mb of Object.values(r.rssMb)) expect(Number.isFinite(mb), r.attack).toBe(true);
        expect(r.rssMb.before, r.attack).toBeGreaterThan(0);
      }
      expect(outcome('heap-big')).toMatch(/^failed: its JavaScript heap reached the worker limit of 256 MB$/);
      expect(outcome('heap-json')).toMatch(/^failed: its JavaScript heap reached the worker limit of 256 MB$/);
      if (process.platform === 'linux') {
        expect(outcome('heap-typed')).toMatch(
          /^failed: its resident memory reached \d+ MB, over the worker limit of 512 MB$/,
        );
      }
      expect(outcome('spinner')).toMatch(/^cancelled; the next task completed \d+ ms after the cancel$/);
      expect(outcome('log-flood')).toMatch(/^completed: \d+ of 20000 lines dropped, last seq 20000$/);
      expect(outcome('log-flood-inline')).toMatch(/^completed: \d+ of 20000 lines dropped, last seq 20000$/);
      const table = renderAttacks(results, 'sqlite');
      // The header, its rule, and a row per attack.
      expect(table.split('\n').filter((line) => line.startsWith('| ')).length).toBe(results.length + 2);
      expect(table).not.toContain('NaN');
    },
  );
});
