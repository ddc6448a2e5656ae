/**
 * `terminus gate` from dist/, as a user runs it: the table from summaries folded as the series end
 * (nothing held), the process's peak RSS, and the JSON report with its failing-series fields.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const gate = (...args: string[]) =>
  execFileSync('node', ['dist/cli/main.js', 'gate', ...args], { encoding: 'utf8', timeout: 240_000 });

describe('terminus gate', () => {
  it('prints the table, the verdict and the peak RSS; --json carries failing and moreFailing', () => {
    const text = gate('--series', '6', '--workers', '2');
    expect(text).toMatch(/C13 violations\s+0\s+0 series\s+pass/);
    expect(text).toMatch(/cancel cadence violations\s+0\s+0 series\s+pass/);
    expect(text).toMatch(/^6 series in [\d.]+ s: PASS$/m);
    expect(text).toMatch(/^peak RSS \d+ MB$/m);
    const report = JSON.parse(gate('--series', '3', '--seed', '9', '--workers', '1', '--json')) as {
      series: number;
      pass: boolean;
      failing: unknown[];
      moreFailing: unknown[];
    };
    expect(report).toMatchObject({ series: 3, pass: true, failing: [], moreFailing: [] });
  }, 300_000);
});
