import { describe, expect, it } from 'vitest';
import { describeActivity, describeView, ProgressDisplay, type DisplayStream } from '../../src/cli/render.js';

function logStream(): DisplayStream & { lines: () => string[] } {
  let text = '';
  return {
    write: (chunk: string | Uint8Array) => {
      text += String(chunk);
      return true;
    },
    lines: () => text.split('\n').filter((l) => l !== ''),
  };
}

describe('ProgressDisplay without a terminal (logs)', () => {
  it('writes one line per change, and a change made during a prompt once the prompt is over', () => {
    const out = logStream();
    let now = 0;
    const display = new ProgressDisplay(out, () => now);
    display.update({ state: 'WORKING', serverStatus: 'working' });
    display.update({ state: 'WORKING', serverStatus: 'working' });
    display.pause();
    now = 3_000;
    display.update({ state: 'INPUT_REQUIRED', serverStatus: 'input_required' });
    expect(out.lines()).toEqual(['[0.0s] WORKING (server: working)']);
    display.resume();
    expect(out.lines()).toEqual(['[0.0s] WORKING (server: working)', '[3.0s] INPUT_REQUIRED (server: input_required)']);
    display.resume();
    expect(out.lines()).toHaveLength(2);
  });
});

describe('what the executor is doing (issue 11 defect 6)', () => {
  const now = 1_000_000;
  it('an outage is shown as unreachable with the next attempt counting down, and the server status as last seen', () => {
    const line = describeView(
      {
        state: 'WORKING',
        serverStatus: 'working',
        activity: {
          kind: 'unreachable',
          retryAt: now + 4_200,
          attempt: 3,
          reason: 'connection failed: fetch failed (connect ECONNREFUSED 127.0.0.1:3000)',
        },
      },
      now,
    );
    expect(line).toBe(
      'WORKING (server last said: working)  server unreachable, retrying in 5 s (attempt 3): connect ECONNREFUSED 127.0.0.1:3000',
    );
    expect(describeActivity({ kind: 'throttled', retryAt: now + 2_000, attempt: 1, reason: 'HTTP 429' }, now)).toBe(
      'throttled by the server, retrying in 2 s (attempt 1): HTTP 429',
    );
    expect(describeActivity({ kind: 'retrying', retryAt: now, attempt: 2, reason: 'malformed result' }, now)).toBe(
      'retrying now (attempt 2): malformed result',
    );
    expect(describeView({ state: 'WORKING', serverStatus: 'working', activity: { kind: 'polling' } }, now)).toBe(
      'WORKING (server: working)',
    );
  });

  it('a cancel is requested, delivered, then confirmed: three different lines', () => {
    const lines = (['requested', 'delivered', 'confirmed'] as const).map((cancel) =>
      describeView({ state: 'CANCEL_REQUESTED', serverStatus: 'working', cancel }, now),
    );
    expect(lines).toEqual([
      'CANCEL_REQUESTED (server: working)  cancel requested (not yet acknowledged by the server)',
      'CANCEL_REQUESTED (server: working)  cancel delivered; waiting for the server to confirm',
      'CANCEL_REQUESTED (server: working)  cancel confirmed',
    ]);
  });

  it('keep() leaves the last line of a terminal on screen (the 100 % line at completion)', () => {
    let text = '';
    const out: DisplayStream = {
      isTTY: true,
      columns: 0,
      write: (c: string | Uint8Array) => ((text += String(c)), true),
    };
    const display = new ProgressDisplay(out, () => 0);
    display.update({ state: 'ACCEPTED', progress: { done: 20, total: 20 } });
    display.keep();
    display.stop();
    expect(text.endsWith('0.0s  ACCEPTED  [####################] 100% (20/20)\n')).toBe(true);
  });
});
