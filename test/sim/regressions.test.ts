/**
 * Seeds the 100,000-series gate failed on before their fixes: each replays clean now. They lie past
 * the 10,000 seeds `.ci/run` gates, so they are kept here by number.
 */
import { describe, expect, it } from 'vitest';
import { runSeries } from '../../src/sim/series.js';

const FOUND = [
  // liveness: a cancel resend owed after a 404 and a key lookup was taken for one still on the wire.
  { seed: 10044, broke: 'liveness' },
  // C6: a status read queued for a QPS token went out after a Retry-After that arrived meanwhile.
  { seed: 10534, broke: 'C6' },
  { seed: 12710, broke: 'C6' },
  { seed: 44639, broke: 'C6' },
  // C6: each 404 and key lookup read the status again before fetching: 6 reads within one second.
  { seed: 36362, broke: 'C6' },
  // C10: a resume after a detach asked the approval gate again while the first ask was still open.
  { seed: 80158, broke: 'C10' },
];

describe('gate seeds from the 100,000-series run', () => {
  for (const { seed, broke } of FOUND) {
    it(`seed ${seed} (${broke}) passes every invariant`, async () => {
      const outcome = await runSeries({ seed });
      expect(outcome.violations).toEqual([]);
    }, 60_000);
  }
});
