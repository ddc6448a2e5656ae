/**
 * The gate's checkpoint (`src/sim/checkpoint.ts`): a tally written and read back reports what the
 * tally did, seeds done out of order stay compact, and a file that is not a checkpoint of this run
 * is refused with its reason, never half used.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CheckpointError,
  codeDigest,
  DoneSeeds,
  otherRun,
  readCheckpoint,
  writeCheckpoint,
  type GateRun,
} from '../../src/sim/checkpoint.js';
import { gateReportOf } from '../../src/sim/gate.js';
import { runPool } from '../../src/sim/pool.js';
import { GateTally } from '../../src/sim/tally.js';
import { tempDir } from '../cli/helpers.js';

const dir = tempDir('terminus-checkpoint-');
afterAll(() => dir.remove());
const RUN: GateRun = { seed: 1, series: 40, faults: null, wires: ['mcp-tasks-ext'], code: codeDigest() };

describe('gate checkpoint', () => {
  it('a tally of 40 series written and read back gives the same report, and its seeds done', async () => {
    const tally = new GateTally();
    const done = new DoneSeeds(1);
    await runPool({
      seeds: Array.from({ length: 40 }, (_, i) => i + 1),
      workers: 1,
      collect: false,
      onSummary: (s) => {
        tally.add(s);
        done.add(s.seed);
      },
    });
    const path = join(dir.path, 'forty.json');
    await writeCheckpoint(path, { run: RUN, wires: new Map([['mcp-tasks-ext', { done, tally, elapsedMs: 1234 }]]) });
    const back = await readCheckpoint(path);
    expect(back?.run).toEqual(RUN);
    const wire = back?.wires.get('mcp-tasks-ext');
    expect(wire?.elapsedMs).toBe(1234);
    expect(wire?.done.below).toBe(41);
    expect(gateReportOf(wire!.tally, 1234)).toEqual(gateReportOf(tally, 1234));
    expect(tally.cancel.count).toBeGreaterThan(0);
    expect(wire!.tally.cancel.quantile(0.99)).toBe(tally.cancel.quantile(0.99));
  }, 120_000);

  it('a checkpoint written before a count was added still reads, the count 0 (the fifth million run)', async () => {
    const back = await readCheckpoint('docs/gate-runs/million-86e4c4f480826979.ckpt');
    const tally = back!.wires.get('mcp-tasks-ext')!.tally;
    expect(tally.series).toBe(1_000_000);
    expect(tally.contradictions).toBe(0);
    expect(gateReportOf(tally, 0).rows.every((r) => !r.measured.includes('NaN'))).toBe(true);
  });

  it('seeds done out of order keep only those above the first gap', () => {
    const done = new DoneSeeds(10);
    for (const seed of [11, 13, 10, 14]) done.add(seed);
    expect([done.below, done.above]).toEqual([12, [13, 14]]);
    done.add(12);
    expect([done.below, done.above]).toEqual([15, []]);
    expect(done.has(9) && done.has(14) && !done.has(15)).toBe(true);
  });

  it('names the first difference from another run', () => {
    expect(otherRun(RUN, RUN)).toBeUndefined();
    expect(otherRun(RUN, { ...RUN, series: 50 })).toBe('--series 40 there, 50 here');
    expect(otherRun(RUN, { ...RUN, faults: ['submit_request_lost'] })).toBe(
      '--faults all there, submit_request_lost here',
    );
    expect(otherRun(RUN, { ...RUN, code: 'f00' })).toBe(`it began on other code: digest ${RUN.code} there, f00 here`);
    expect(RUN.code).toMatch(/^[0-9a-f]{16}$/);
    expect(codeDigest()).toBe(RUN.code);
  });

  it('no file is no checkpoint; a damaged or foreign file is a CheckpointError that says what is wrong', async () => {
    await expect(readCheckpoint(join(dir.path, 'absent.json'))).resolves.toBeUndefined();
    const cases: [string, RegExp][] = [
      ['{"format":"terminus-gate-checkpoint","version":1,"run":{"se', /is not JSON \(damaged\?\)/],
      ['{"hello":"world"}', /is not a gate checkpoint, or is damaged at format/],
      [
        JSON.stringify({
          format: 'terminus-gate-checkpoint',
          version: 1,
          run: RUN,
          wires: { 'mcp-tasks-ext': { below: 500, above: [], elapsedMs: 0, tally: new GateTally().snapshot() } },
        }),
        /its mcp-tasks-ext seeds lie outside the run/,
      ],
      [
        JSON.stringify({
          format: 'terminus-gate-checkpoint',
          version: 1,
          run: RUN,
          wires: { 'mcp-tasks-ext': { below: 5, above: [], elapsedMs: 0, tally: new GateTally().snapshot() } },
        }),
        /counts 0 series for 4 seeds done/,
      ],
    ];
    for (const [i, [text, message]] of cases.entries()) {
      const path = join(dir.path, `bad-${i}.json`);
      writeFileSync(path, text);
      const read = readCheckpoint(path);
      await expect(read).rejects.toThrow(CheckpointError);
      await expect(read).rejects.toThrow(message);
    }
  });

  it('a write that fails leaves no temporary file and throws', async () => {
    const path = join(dir.path, 'a-folder');
    mkdirSync(path);
    const tally = new GateTally();
    const write = writeCheckpoint(path, {
      run: RUN,
      wires: new Map([['mcp-tasks-ext', { done: new DoneSeeds(1), tally, elapsedMs: 0 }]]),
    });
    await expect(write).rejects.toThrow();
    expect(readdirSync(dir.path).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
