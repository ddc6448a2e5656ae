/**
 * `terminus gate` from dist/, as a user runs it: the table from summaries folded as the series end
 * (nothing held), the process's peak RSS, and the JSON report with its failing-series fields.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const dir = tempDir('terminus-gate-');
afterAll(() => dir.remove());

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

  it('seeds past 2^32-1 are refused with the most --series that fit (2); a hundred million series start in the memory of a thousand', async () => {
    const past = spawnSync('node', ['dist/cli/main.js', 'gate', '--seed', '4294967290', '--series', '7'], {
      encoding: 'utf8',
    });
    expect(past.status).toBe(2);
    expect(past.stderr).toBe(
      'terminus gate: seeds 4294967290..4294967296 go past the last seed 4294967295: give at most --series 6 from --seed 4294967290\n',
    );
    // The seeds are handed to the workers as a range: held as an array, 10^8 seeds took 1.5 GB of
    // RSS within 7 s, before a series ran. The ratio is to a run of 1,000 sampled alongside.
    const peak = async (series: string): Promise<number> => {
      const child = spawn('node', ['dist/cli/main.js', 'gate', '--series', series, '--workers', '1'], {
        stdio: 'ignore',
      });
      let max = 0;
      for (let i = 0; i < 20; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        max = Math.max(max, Number(rss?.[1] ?? 0));
      }
      child.kill('SIGKILL');
      return max;
    };
    const [big, small] = await Promise.all([peak('100000000'), peak('1000')]);
    expect(small).toBeGreaterThan(0);
    expect(big / small).toBeLessThan(1.5);
  }, 60_000);

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

  it('--checkpoint: Ctrl-C saves the run and exits 130; --status prints what it holds; the same command goes on to the report of an uninterrupted run; another run or a damaged file is refused (2)', async () => {
    const file = join(dir.path, 'run.json');
    const args = ['dist/cli/main.js', 'gate', '--series', '120', '--workers', '2', '--checkpoint', file];
    const child = spawn('node', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let sent = false;
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // The first progress line: the run is under way and not finished.
      if (/series \(/.test(stderr) && !sent) sent = child.kill('SIGINT');
    });
    expect(await exited).toBe(130);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as {
      wires: Record<string, { tally: { counts: { series: number } } }>;
    };
    const stoppedAt = saved.wires['mcp-tasks-ext']!.tally.counts.series;
    expect(stoppedAt).toBeGreaterThanOrEqual(12);
    expect(stoppedAt).toBeLessThan(120);
    expect(stderr).toContain(`SIGINT: stopped at ${stoppedAt}/120 mcp-tasks-ext series; checkpoint saved to ${file}`);

    // --status: the table of what the file holds, running nothing; the run is the file's, not these options'.
    const status = spawnSync('node', ['dist/cli/main.js', 'gate', '--series', '7', '--checkpoint', file, '--status'], {
      encoding: 'utf8',
    });
    expect(status.status, status.stderr).toBe(0);
    expect(status.stderr).toMatch(
      new RegExp(
        `^checkpoint ${file}: terminus gate --wire mcp-tasks-ext --series 120 \\(code [0-9a-f]{16}, this build's: the same command goes on from it\\)\n  mcp-tasks-ext: ${stoppedAt}/120 series \\(\\d+%\\), \\d+ s run`,
      ),
    );
    expect(status.stdout).toMatch(new RegExp(`^${stoppedAt} series in [\\d.]+ s: PASS$`, 'm'));
    expect(status.stdout).not.toMatch(/peak RSS/);
    expect(JSON.parse(readFileSync(file, 'utf8')).wires['mcp-tasks-ext'].tally.counts.series).toBe(stoppedAt);
    const failed = join(dir.path, 'failed.json');
    writeFileSync(failed, readFileSync(file, 'utf8').replace('"byInvariant":[]', '"byInvariant":[["C6",1]]'));
    const failing = spawnSync('node', ['dist/cli/main.js', 'gate', '--checkpoint', failed, '--status'], {
      encoding: 'utf8',
    });
    expect(failing.status).toBe(1);
    expect(failing.stdout).toMatch(/C6 violations\s+0\s+1 series\s+FAIL/);
    const none = spawnSync(
      'node',
      ['dist/cli/main.js', 'gate', '--checkpoint', join(dir.path, 'none.json'), '--status'],
      {
        encoding: 'utf8',
      },
    );
    expect(none.status).toBe(2);
    expect(none.stderr).toContain(`terminus gate: no checkpoint at ${join(dir.path, 'none.json')}`);
    const bare = spawnSync('node', ['dist/cli/main.js', 'gate', '--status'], { encoding: 'utf8' });
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('--status reads a run from --checkpoint FILE');

    const resumed = spawnSync('node', [...args, '--json'], { encoding: 'utf8', timeout: 240_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`going on from ${stoppedAt}/120 series, 0 failing (${file})`);
    const whole = JSON.parse(gate('--series', '120', '--workers', '2', '--json')) as Record<string, unknown>;
    const { wallMs: _a, ...rest } = JSON.parse(resumed.stdout) as Record<string, unknown>;
    const { wallMs: _b, ...wholeRest } = whole;
    expect(rest).toEqual(wholeRest);
    expect(rest).toMatchObject({ series: 120, pass: true });

    const other = spawnSync('node', ['dist/cli/main.js', 'gate', '--series', '50', '--checkpoint', file], {
      encoding: 'utf8',
    });
    expect(other.status).toBe(2);
    expect(other.stderr).toContain(`checkpoint ${file} is of another run (--series 120 there, 50 here)`);
    const moved = join(dir.path, 'other-code.json');
    const text = readFileSync(file, 'utf8');
    writeFileSync(moved, text.replace(/"code":"[0-9a-f]+"/, '"code":"0000000000000000"'));
    const otherCode = spawnSync('node', [...args.slice(0, -1), moved], { encoding: 'utf8' });
    expect(otherCode.status).toBe(2);
    expect(otherCode.stderr).toContain('(it began on other code: digest 0000000000000000 there, ');
    const damaged = join(dir.path, 'damaged.json');
    writeFileSync(damaged, readFileSync(file, 'utf8').slice(0, 200));
    const broken = spawnSync('node', ['dist/cli/main.js', 'gate', '--series', '120', '--checkpoint', damaged], {
      encoding: 'utf8',
    });
    expect(broken.status).toBe(2);
    expect(broken.stderr).toContain(`checkpoint ${damaged} is not JSON (damaged?)`);
    expect(readFileSync(damaged, 'utf8')).toHaveLength(200);
  }, 300_000);
});
