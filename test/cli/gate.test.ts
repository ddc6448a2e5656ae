/**
 * `terminus gate` from dist/, as a user runs it: the table from summaries folded as the series end
 * (nothing held), the process's peak RSS, and the JSON report with its failing-series fields.
 */
import { execFileSync, spawnSync } from 'node:child_process';
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

  it('off a terminal, prints a progress line to stderr at every tenth of the series', () => {
    const run = spawnSync('node', ['dist/cli/main.js', 'gate', '--series', '10', '--workers', '2'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(run.status).toBe(0);
    const lines = run.stderr.trim().split('\n');
    expect(lines.map((l) => l.split(' series')[0])).toEqual([
      '1/10',
      '2/10',
      '3/10',
      '4/10',
      '5/10',
      '6/10',
      '7/10',
      '8/10',
      '9/10',
    ]);
    expect(lines[0]).toMatch(/^1\/10 series \(10%\), \d+ s, \d+ series\/s, about \d+ s left, 0 failing$/);
    expect(run.stdout).toMatch(/^10 series in [\d.]+ s: PASS$/m);
  }, 300_000);
});
