/**
 * The stdio transport: its stdout (`coalescedOutput`) writes the answers of one event-loop turn as
 * one write, in order, and keeps a Writable's contract for the SDK's transport (backpressure and
 * drain, errors of the target); its line parse (`parseLine`) answers exactly as the SDK's
 * `deserializeMessage` on every line, valid or not, while skipping zod for plain requests.
 */
import { Writable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { deserializeMessage, RELATED_TASK_META_KEY } from '@modelcontextprotocol/server';
import { coalescedOutput, parseLine, PlainRequestBuffer, stdioTransport } from '../../src/server/stdio-transport.js';

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

/** What a parse gave: the message, or the error's class and message. */
function outcome(parse: (line: string) => unknown, line: string): unknown {
  try {
    return { value: parse(line) };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

const BASE: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 't-1' } },
  {
    jsonrpc: '2.0',
    id: 'a',
    method: 'tools/call',
    params: { name: 'x', arguments: { n: [1, { y: null }] }, task: { ttl: 5 } },
  },
  { jsonrpc: '2.0', id: 2, method: 'ping' },
  { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: 't', _meta: { 'io.x/y': { z: 1 } } } },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { _meta: { progressToken: 7 } } },
  {
    jsonrpc: '2.0',
    id: 5,
    method: 'tools/call',
    params: { _meta: { [RELATED_TASK_META_KEY]: { taskId: 't', extra: 1 } } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 6, result: { ok: true } },
  { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'no' } },
];
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  0,
  1.5,
  -1,
  2 ** 60,
  '',
  '2.0',
  '1.0',
  'x',
  [],
  [1],
  {},
  { a: 1 },
  true,
];
const KEYS = [
  'jsonrpc',
  'id',
  'method',
  'params',
  'result',
  'error',
  'extra',
  '_meta',
  'progressToken',
  RELATED_TASK_META_KEY,
  'taskId',
  '__proto__',
];

/** A seeded walk that sets, drops or adds keys at the top, in params and in params._meta. */
function mutations(count: number): string[] {
  let seed = 17;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const message = JSON.parse(JSON.stringify(pick(BASE))) as Record<string, unknown>;
    for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
      const params = message.params as Record<string, unknown> | undefined;
      const meta = (typeof params === 'object' && params !== null ? params._meta : undefined) as
        Record<string, unknown> | undefined;
      const scopes = [
        message,
        ...(typeof params === 'object' && params !== null && !Array.isArray(params) ? [params] : []),
      ];
      if (typeof meta === 'object' && meta !== null && !Array.isArray(meta)) scopes.push(meta);
      const scope = pick(scopes);
      const key = pick(KEYS);
      const value = random() < 0.2 ? JSON.parse(JSON.stringify(pick(BASE))) : pick(ODD_VALUES);
      if (value === undefined) delete scope[key];
      else Object.defineProperty(scope, key, { value, enumerable: true, configurable: true, writable: true });
    }
    lines.push(JSON.stringify(message));
  }
  return lines;
}

describe('the stdio line parse', () => {
  it('answers as the SDK on every line: the base messages, 3,000 seeded mutations, and lines that are not JSON-RPC', () => {
    const lines = [
      ...BASE.map((m) => JSON.stringify(m)),
      ...mutations(3_000),
      '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"__proto__":{"polluted":1}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"_meta":{"__proto__":{"progressToken":"x"}}}}',
      '[]',
      '7',
      '"text"',
      'null',
      'not json',
    ];
    let plain = 0;
    for (const line of lines) {
      const ours = outcome(parseLine, line);
      expect(ours, line).toStrictEqual(outcome(deserializeMessage, line));
      if ('value' in (ours as object) && (ours as { value: unknown }).value !== undefined) plain++;
    }
    expect(plain).toBeGreaterThan(500);
  });

  it('the read buffer splits lines as the SDK does: CRLF, a line in two chunks, a non-JSON line skipped', () => {
    const buffer = new PlainRequestBuffer();
    buffer.append(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"a"}\r\nnot json\n{"jsonrpc":"2.0",'));
    expect(buffer.readMessage()).toStrictEqual({ jsonrpc: '2.0', id: 1, method: 'a' });
    expect(buffer.readMessage()).toBeNull();
    buffer.append(Buffer.from('"id":2,"method":"b"}\n'));
    expect(buffer.readMessage()).toStrictEqual({ jsonrpc: '2.0', id: 2, method: 'b' });
    expect(buffer.readMessage()).toBeNull();
    const small = new PlainRequestBuffer(8);
    expect(() => small.append(Buffer.from('0123456789'))).toThrow('ReadBuffer exceeded maximum size of 8 bytes');
  });

  it("takes the SDK transport's read buffer (fails if the SDK stops reading through _readBuffer)", () => {
    const transport = stdioTransport();
    expect((transport as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(PlainRequestBuffer);
  });
});
