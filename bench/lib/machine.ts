/** The machine line of the report: cores, CPU, memory, and the fsync rate of the databases' disk. */
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { availableParallelism, cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Machine } from './report.js';
import { summarize } from './stats.js';

/**
 * write+fsync of one 4 KiB block in a loop, `rounds` times for `ms` each: the ceiling of a store
 * that commits each task with its own fsync. Measured in `dir`, where the databases live.
 */
export function fsyncRate(dir: string, ms: number, rounds: number): number[] {
  const block = Buffer.alloc(4096, 7);
  const rates: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const path = join(dir, `fsync-probe-${round}`);
    const fd = openSync(path, 'w');
    try {
      let count = 0;
      const start = performance.now();
      while (performance.now() - start < ms) {
        writeSync(fd, block, 0, block.length, (count % 256) * block.length);
        fsyncSync(fd);
        count += 1;
      }
      rates.push(count / ((performance.now() - start) / 1000));
    } finally {
      closeSync(fd);
      rmSync(path, { force: true });
    }
  }
  return rates;
}

export function describeMachine(fsyncRates: readonly number[]): Machine {
  return {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${platform()} ${release()}`,
    fsyncPerSecond: summarize(fsyncRates),
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  };
}
