/**
 * The gate's progress: an hours-long run off a terminal (CI, a file) is never silent, and a failing
 * series is told the moment it ends, with the command that replays it.
 */
import { describe, expect, it } from 'vitest';
import { GateProgress, span } from '../../src/cli/gate-progress.js';

function sink(isTTY: boolean) {
  const lines: string[] = [];
  return { out: { isTTY, write: (text: string) => lines.push(text) }, lines };
}

describe('gate progress', () => {
  it('off a terminal: a line at every tenth of the series, none for the last one', () => {
    const { out, lines } = sink(false);
    let now = 0;
    const p = new GateProgress({ total: 100, started: 0, out, now: () => now });
    for (let done = 1; done <= 100; done++) {
      now = done * 10;
      p.tick(done);
    }
    expect(lines).toHaveLength(9);
    expect(lines[0]).toBe('10/100 series (10%), 0 s, 100 series/s, about 1 s left, 0 failing\n');
    expect(lines[8]).toMatch(/^90\/100 series \(90%\), 1 s, 100 series\/s, about 0 s left, 0 failing\n$/);
  });

  it('off a terminal: at least once a minute between tenths', () => {
    const { out, lines } = sink(false);
    let now = 0;
    const p = new GateProgress({ prefix: 'tasks-ext: ', total: 1_000_000, started: 0, out, now: () => now });
    for (let done = 1; done <= 3_000; done++) {
      now = done * 100; // 10 series/s: a tenth is hours away
      p.tick(done);
    }
    expect(lines.map((l) => l.split(' series')[0])).toEqual([
      'tasks-ext: 601/1000000',
      'tasks-ext: 1202/1000000',
      'tasks-ext: 1803/1000000',
      'tasks-ext: 2404/1000000',
    ]);
    // Hours are read as hours: 997,596 series at 10 series/s.
    expect(lines[3]).toBe('tasks-ext: 2404/1000000 series (0%), 4 min, 10 series/s, about 27.7 h left, 0 failing\n');
  });

  it('spans: seconds below 2 min, minutes below 2 h, then hours', () => {
    expect([0, 119, 119.6, 2_468, 7_169, 7_199, 112_568].map(span)).toEqual([
      '0 s',
      '119 s',
      '2 min',
      '41 min',
      '119 min',
      '2.0 h',
      '31.3 h',
    ]);
  });

  it('a failing series is told at once and counted in the lines after it', () => {
    const { out, lines } = sink(false);
    let now = 0;
    const p = new GateProgress({ total: 10, started: 0, out, now: () => now });
    p.failed('series 7 failed (C6): terminus gate --wire mcp-tasks-ext --seed 7 --series 1');
    now = 1_000;
    p.tick(1);
    expect(lines[0]).toBe('series 7 failed (C6): terminus gate --wire mcp-tasks-ext --seed 7 --series 1\n');
    expect(lines[1]).toMatch(/, 1 failing\n$/);
  });

  it('going on from a checkpoint: the rate counts only this run, and the failing count goes on', () => {
    const { out, lines } = sink(false);
    let now = 0;
    const p = new GateProgress({ total: 1_000, started: 0, out, now: () => now, already: 500, failing: 4 });
    for (let done = 501; done <= 600; done++) {
      now = (done - 500) * 10;
      p.tick(done);
    }
    p.failed('series 577 failed (C13): replay');
    expect(lines).toEqual([
      '600/1000 series (60%), 1 s, 100 series/s, about 4 s left, 4 failing\n',
      'series 577 failed (C13): replay\n',
    ]);
    now = 61_010;
    p.tick(601);
    expect(lines[2]).toMatch(/^601\/1000 series .*, 5 failing\n$/);
  });

  it('on a terminal: one line rewritten every 2 s, and a failure on a line of its own', () => {
    const { out, lines } = sink(true);
    let now = 0;
    const p = new GateProgress({ total: 1_000, started: 0, out, now: () => now });
    for (let done = 1; done <= 500; done++) {
      now = done * 10;
      p.tick(done);
    }
    p.failed('series 3 failed (C10): replay');
    p.end();
    expect(lines.slice(0, 2)).toEqual([
      '\r201/1000 series (20%), 2 s, 100 series/s, about 8 s left, 0 failing\x1b[K',
      '\r402/1000 series (40%), 4 s, 100 series/s, about 6 s left, 0 failing\x1b[K',
    ]);
    expect(lines.slice(2)).toEqual(['\rseries 3 failed (C10): replay\x1b[K\n', '\n']);
  });
});
