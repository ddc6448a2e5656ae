/**
 * The gate's flat memory, pinned structurally: once a series ended, nothing may keep it reachable.
 * A forked `node --expose-gc` child runs 20 series holding each series' virtual clock (reached by
 * every part of the series) only through a WeakRef, collects garbage, and reports how many are still
 * alive. Both leaks the 100,000-series runs found are caught by it: with the sim clock's abort
 * listeners left on their signals (`VirtualClock.dispose`) 3 of the 20 stayed alive, with a dead
 * client process's push listener left open (`SimPush.dispose`) 5 of 20, each series about 32-140 KB
 * that grew RSS to 1.6 GB at 10,000 series. No timing and no heap size is asserted.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const child = fileURLToPath(new URL('./memory-child.ts', import.meta.url));

describe('gate memory', () => {
  it('no series stays reachable after its end (WeakRef over its clock, forced GC in a child)', async () => {
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', child, '20', '1'], {
      cwd: root,
      timeout: 120_000,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { series: number; alive: number };
    expect(report.series).toBe(20);
    expect(report.alive, stdout).toBe(0);
  }, 150_000);
});
