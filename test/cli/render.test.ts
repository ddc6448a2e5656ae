import { describe, expect, it } from 'vitest';
import { ProgressDisplay, type DisplayStream } from '../../src/cli/render.js';

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
