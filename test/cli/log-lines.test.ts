/**
 * How the CLI prints a task's log (issue 18): a gap in `seq` is lines the server's bound dropped,
 * an epoch change is a re-run after a crash, and a line's control characters are shown escaped (a
 * log is untrusted text: an escape sequence must not redraw the terminal).
 */
import { describe, expect, it } from 'vitest';
import { lineText, LogMarks } from '../../src/cli/log-lines.js';
import type { LogLine } from '../../src/executor/wire-port.js';

const line = (seq: number, epoch = 1, text = `line ${seq}`, stream: LogLine['stream'] = 'log'): LogLine => ({
  seq,
  epoch,
  at: '2026-12-01T11:13:21.214Z',
  stream,
  text,
});

describe('log lines in the CLI', () => {
  it('marks lines dropped before the first one read and between two, and a re-run', () => {
    const marks = new LogMarks(0);
    expect(marks.render(line(41))).toEqual({
      markers: ['-- 40 lines dropped (the server keeps a bounded log per task; the oldest go first) --'],
      text: '11:13:21.214  line 41',
    });
    expect(marks.before(line(42))).toEqual([]);
    expect(marks.before(line(44, 2))).toEqual([
      '-- 1 line dropped (the server keeps a bounded log per task; the oldest go first) --',
      '-- re-run, epoch 2 --',
    ]);
    // Started from a cursor: nothing before it counts as dropped, and no re-run is claimed at the start.
    expect(new LogMarks(10).before(line(11, 3))).toEqual([]);
  });

  it('escapes control characters, keeps tabs, marks output chunks', () => {
    expect(lineText(line(1, 1, '\u001b[2J\rwiped\tok\n'))).toBe('11:13:21.214  \\x1b[2J\\x0dwiped\tok');
    expect(lineText(line(2, 1, '12 tests: 10 passed', 'output'))).toBe('11:13:21.214  > 12 tests: 10 passed');
  });
});
