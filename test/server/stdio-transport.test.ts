/**
 * The stdio transport's stdout (`coalescedOutput`): the answers of one event-loop turn leave as one
 * write, in order, and the stream keeps a Writable's contract for the SDK's transport (backpressure
 * and drain, errors of the target).
 */
import { Writable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { coalescedOutput } from '../../src/server/stdio-out.js';

function recorder(options: { highWaterMark?: number; slow?: boolean } = {}) {
  const writes: string[] = [];
  const target = new Writable({
    highWaterMark: options.highWaterMark ?? 16_384,
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      if (options.slow === true) setTimeout(done, 1);
      else done();
    },
  });
  return { target, writes };
}

describe('coalescedOutput', () => {
  it('writes the chunks of one turn as one write, in order, and the next turn apart', async () => {
    const { target, writes } = recorder();
    const out = coalescedOutput(target);
    for (const line of ['{"id":1}\n', '{"id":2}\n', '{"id":3}\n']) expect(out.write(line)).toBe(true);
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual(['{"id":1}\n{"id":2}\n{"id":3}\n']);
    out.write('{"id":4}\n');
    await turn();
    expect(writes).toEqual(['{"id":1}\n{"id":2}\n{"id":3}\n', '{"id":4}\n']);
  });

  it('past the high-water mark says so, drains, and loses or reorders nothing behind a slow target', async () => {
    const { target, writes } = recorder({ highWaterMark: 64, slow: true });
    const out = coalescedOutput(target);
    const lines = Array.from({ length: 2_000 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"result":{}}\n`);
    let refused = 0;
    for (const [i, line] of lines.entries()) {
      if (!out.write(line)) {
        refused++;
        await new Promise((resolve) => out.once('drain', resolve));
      }
      if (i % 100 === 0) await turn();
    }
    await new Promise<void>((resolve) => out.end(resolve));
    expect(refused).toBeGreaterThan(0);
    expect(writes.join('')).toBe(lines.join(''));
    expect(writes.length).toBeLessThan(lines.length);
  });

  it("an error of the target is the stream's error", async () => {
    const target = new Writable({ write: (_chunk, _encoding, done) => done(new Error('EPIPE')) });
    target.on('error', () => {});
    const out = coalescedOutput(target);
    const failed = new Promise<Error>((resolve) => out.once('error', resolve));
    out.write('x\n');
    expect((await failed).message).toBe('EPIPE');
  });
});
