/**
 * The simulation over every wire (issue 17 item 1): the same series generator and checkers drive
 * the executor over the 2025-11-25 wire, SEP-1391 and AIP-151 against each wire's real server
 * adapter. Per wire: the same seed gives the same trace, a small smoke run passes every checker,
 * and the seeds that found defects on the way replay clean.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { gateReport } from '../../src/sim/gate.js';
import { runSeries } from '../../src/sim/series.js';
import { summarize } from '../../src/sim/summary.js';
import { SIM_WIRES, simWire } from '../../src/sim/wires/index.js';

const SEEDS = [1, 2, 3, 5, 8, 13, 16, 21, 24, 34];

describe('every wire in the simulation', () => {
  for (const wire of SIM_WIRES) {
    it(`${wire}: the same seed gives the same event trace (sample of swarm and scripted seeds, run twice)`, async () => {
      const first: string[] = [];
      for (const seed of SEEDS) first.push((await runSeries({ seed, wire })).traceDigest);
      const second: string[] = [];
      for (const seed of SEEDS) second.push((await runSeries({ seed, wire })).traceDigest);
      expect(second).toEqual(first);
      expect(new Set(first).size).toBe(SEEDS.length);
    }, 300_000);
  }

  it('a seed drives each wire with its own messages: four wires, four traces', async () => {
    const digests = [];
    for (const wire of SIM_WIRES) digests.push((await runSeries({ seed: 7, wire })).traceDigest);
    expect(new Set(digests).size).toBe(SIM_WIRES.length);
  }, 120_000);

  for (const wire of SIM_WIRES.filter((w) => w !== 'mcp-tasks-ext')) {
    it(`${wire}: 60 seeded series pass every checker of the gate`, async () => {
      const summaries = [];
      for (let seed = 1; seed <= 60; seed++) summaries.push(summarize(await runSeries({ seed, wire })));
      const report = gateReport(summaries, 0);
      const failing = report.failing.map(
        (s) => `seed ${s.seed}: ${s.violations.map((v) => `${v.invariant} ${v.detail}`).join('; ')}`,
      );
      expect(report.pass, failing.join('\n')).toBe(true);
      // The wire's own messages crossed the network: every series submitted and settled something.
      expect(summaries.every((s) => s.metrics.operations > 0 && s.wire === wire)).toBe(true);
    }, 300_000);
  }

  it('fault classes that cannot apply are listed with their reason, never silently skipped', () => {
    expect(Object.keys(simWire('mcp-tasks-ext').notApplicable)).toEqual([]);
    // The server's lies (C13) are told on every wire; where the result is read apart and once
    // (2025-11-25, SEP-1391) no read can show it changed, and on SEP-1391 no status read follows a
    // terminal one for a rewritten or reverted status to answer.
    expect(Object.keys(simWire('mcp-2025-11-25').notApplicable)).toEqual(['result_changed']);
    expect(Object.keys(simWire('sep-1391').notApplicable).sort()).toEqual(
      [
        'result_changed',
        'terminal_rewritten',
        'terminal_reverted',
        'input_replay',
        'not_found_before_expiry',
        'task_id_misuse',
        // SEP-1391 keeps no ordered task events: there is no stream for a reader to resume.
        'event_stream_cut',
      ].sort(),
    );
    expect(Object.keys(simWire('aip-151').notApplicable)).toEqual(['input_replay']);
    for (const wire of SIM_WIRES) {
      for (const reason of Object.values(simWire(wire).notApplicable)) expect(reason.length).toBeGreaterThan(40);
    }
  });
});

describe('terminus gate --wire', () => {
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['dist/cli/main.js', 'gate', ...args], { timeout: 120_000 }, (error, stdout, stderr) =>
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr }),
      );
    });

  it('all: one row per wire, the fault classes not applied with their reasons, exit 0 when every wire passes', async () => {
    const { code, stdout } = await cli(['--wire', 'all', '--series', '3', '--workers', '1']);
    expect(code, stdout).toBe(0);
    for (const wire of SIM_WIRES) expect(stdout).toMatch(new RegExp(`^${wire} +3 +[\\d.]+ s +pass`, 'm'));
    expect(stdout).toContain('sep-1391: task_id_misuse not applicable:');
    expect(stdout).toContain('mcp-2025-11-25: duplicate not applied to submit requests:');
    expect(stdout).toMatch(/4 wires, 12 series in [\d.]+ s: PASS/);
  }, 180_000);

  it('an unknown wire is refused in one line that names the wires', async () => {
    const { code, stderr } = await cli(['--wire', 'smoke-signals', '--series', '1']);
    expect(code).not.toBe(0);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('mcp-2025-11-25');
  });
});
