/**
 * The newline framing of a stdio server's output (`startStdioProcess`), with a real child: a message
 * written in pieces, several in one write, CRLF endings, blank and non-JSON lines, and a 5 MB line
 * arrive whole, once each, in order.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { startStdioProcess } from '../../src/executor/adapters/stdio-process.js';

const WRITER = `
const out = (s) => new Promise((r) => process.stdout.write(s, r));
(async () => {
  const one = JSON.stringify({ n: 1, text: 'split' });
  for (let i = 0; i < one.length; i += 3) await out(one.slice(i, i + 3));
  await out('\\n' + JSON.stringify({ n: 2 }) + '\\n' + JSON.stringify({ n: 3 }) + '\\r\\n\\nnot json\\n');
  await out(JSON.stringify({ n: 4, big: 'x'.repeat(5_000_000) }) + '\\n');
  await out(JSON.stringify({ n: 5 }) + '\\n');
})();
`;

describe('stdio framing', () => {
  it('delivers each line whole, once, in order, whatever the chunks', async () => {
    const child = await startStdioProcess({ command: process.execPath, args: ['-e', WRITER], clock: systemClock });
    const got: { n: number; size: number }[] = [];
    const done = new Promise<void>((resolve) => {
      child.onmessage = (message) => {
        const m = message as { n: number; big?: string };
        got.push({ n: m.n, size: m.big?.length ?? 0 });
        if (m.n === 5) resolve();
      };
    });
    await done;
    await child.close();
    expect(got).toEqual([
      { n: 1, size: 0 },
      { n: 2, size: 0 },
      { n: 3, size: 0 },
      { n: 4, size: 5_000_000 },
      { n: 5, size: 0 },
    ]);
  }, 60_000);
});
