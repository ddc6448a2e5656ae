/**
 * Task logs on the client (issue 18), parsing and following, against a scripted AIP-151 server on
 * real loopback HTTP: the page is checked (a repeated or out-of-order seq is `malformed`, never shown),
 * a missing route is "this server keeps no task logs" (not a crash, not "not found"), and the follower
 * yields each line once across pages, retries a failed read and ends when the server says `done`.
 * The servers of this repository are exercised end to end in `logs-e2e.test.ts`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { systemClock } from '../../src/core/system.js';
import { createAip151Wire } from '../../src/executor/adapters/index.js';
import { ExecutorError } from '../../src/executor/executor-types.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { followLogs, readLogPage, type LogsDeps } from '../../src/executor/logs.js';
import { createTokenBucket } from '../../src/executor/token-bucket.js';
import type { ClientWire, LogLine } from '../../src/executor/wire-port.js';
import { WireFailure } from '../../src/executor/wire-port.js';
import { ev, fresh, run } from './fixtures.js';

type Handler = (url: URL, request: IncomingMessage) => { status: number; body?: unknown };
let handler: Handler = () => ({ status: 404 });
const seen: string[] = [];
let server: Server;
let wire: ClientWire;

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://x');
    seen.push(`${request.method} ${url.pathname}${url.search}`);
    const { status, body } = handler(url, request);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(body === undefined ? '' : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  wire = createAip151Wire({ baseUrl: `http://127.0.0.1:${port}`, clock: systemClock, timeoutMs: 5_000 });
});
afterEach(() => {
  seen.length = 0;
});
afterAll(async () => {
  await wire.close();
  await new Promise((resolve) => server.close(resolve));
});

const line = (seq: number, epoch = 1, text = `line ${seq}`): LogLine => ({
  seq,
  epoch,
  at: '2026-12-01T10:00:00.000Z',
  stream: 'log',
  text,
});
const page = (lines: LogLine[], extra: Record<string, unknown> = {}) => ({
  taskId: 't1',
  lines,
  next: lines.at(-1)?.seq ?? 0,
  dropped: 0,
  status: 'working',
  done: false,
  ...extra,
});
const operation = { name: 'operations/t1', done: false, metadata: {} };
const NOT_FOUND = { status: 404, body: { error: { code: 404, status: 'NOT_FOUND', message: 'no such operation' } } };

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('resolved'),
    (error: unknown) => error,
  );
}

describe('AIP-151 logs route, client side', () => {
  test('a page is decoded; after and limit go in the query', async () => {
    handler = () => ({ status: 200, body: page([line(4), { ...line(5), stream: 'output', fields: { ok: true } }]) });
    const answer = await wire.logs!('t1', { after: 3, limit: 2 });
    expect(seen).toEqual(['GET /v1/operations/t1/logs?after=3&limit=2']);
    expect(answer).toEqual({
      kind: 'page',
      ...page([line(4), { ...line(5), stream: 'output', fields: { ok: true } }]),
    });
  });

  test('lines not after the cursor, out of order, or a cursor behind them: malformed', async () => {
    for (const body of [
      page([line(3)]), // asked after 3
      page([line(5), line(4)]),
      page([line(4), line(5)], { next: 4 }),
      page([{ ...line(4), seq: 'four' } as unknown as LogLine]),
      { ...page([]), status: 'done' },
    ]) {
      handler = () => ({ status: 200, body });
      const error = await failure(wire.logs!('t1', { after: 3 }));
      expect(error).toBeInstanceOf(WireFailure);
      expect((error as WireFailure).kind, JSON.stringify(body)).toBe('malformed');
    }
  });

  test('no logs route on a server that knows the operation: unsupported; neither known: not_found', async () => {
    handler = (url) => (url.pathname.endsWith('/logs') ? NOT_FOUND : { status: 200, body: operation });
    expect(await wire.logs!('t1', {})).toEqual({ kind: 'unsupported' });
    handler = () => NOT_FOUND;
    const error = await failure(wire.logs!('t1', {}));
    expect((error as WireFailure).kind).toBe('not_found');
  });
});

describe('followLogs over that route', () => {
  const deps = async (): Promise<{ deps: LogsDeps; id: string }> => {
    const ledger = createMemoryLedger();
    const { operation: created } = await ledger.create(fresh());
    // Submitted and acknowledged as task t1: the record a follower finds in the ledger.
    const working = run(created, [ev.sent, (r) => ({ ...ev.acked(r), taskId: 't1' })]).record;
    const record = await ledger.apply({ record: working, expectedRevision: created.revision });
    const bucket = createTokenBucket({ qps: Infinity, clock: systemClock });
    return { deps: { ledger, clock: systemClock, bucket, wireOf: async () => wire }, id: record.id };
  };

  test('each line once across pages, a failed read retried, a seq gap left visible, the end at done', async () => {
    const { deps: d, id } = await deps();
    let reads = 0;
    handler = (url) => {
      reads += 1;
      const after = Number(url.searchParams.get('after'));
      if (reads === 1) return { status: 200, body: page([line(1), line(2)]) };
      if (reads === 2) return { status: 500 }; // no usable answer: retried
      if (reads === 3) return { status: 200, body: page([], { next: after }) };
      // Lines 3-4 were dropped by the server's bound before this read (dropped counts them).
      return { status: 200, body: page([line(5, 2)], { dropped: 2, status: 'completed', done: true }) };
    };
    const retries: string[] = [];
    const follower = followLogs(d, id, { intervalMs: 10, onRetry: (f) => retries.push(f.kind) });
    const got: number[] = [];
    for await (const l of follower) got.push(l.seq);
    expect(got).toEqual([1, 2, 5]);
    expect(retries).toEqual(['lost']);
    expect(seen.filter((s) => s.includes('/logs')).map((s) => /after=(\d+)/.exec(s)![1])).toEqual(['0', '2', '2', '2']);
    expect(follower).toMatchObject({ next: 5, dropped: 2, status: 'completed', done: true });
  });

  test('follow: false ends once caught up; a later follower from its cursor repeats nothing', async () => {
    const { deps: d, id } = await deps();
    handler = (url) => {
      const after = Number(url.searchParams.get('after'));
      return { status: 200, body: page([line(1), line(2), line(3)].filter((l) => l.seq > after)) };
    };
    const first = followLogs(d, id, { follow: false });
    const a: number[] = [];
    for await (const l of first) {
      a.push(l.seq);
      if (l.seq === 2) break; // the reader stops half-way: its cursor is the last line it took
    }
    expect(a).toEqual([1, 2]);
    expect(first.next).toBe(2);
    const b: number[] = [];
    for await (const l of followLogs(d, id, { follow: false, after: first.next })) b.push(l.seq);
    expect(b).toEqual([3]);
  });

  test('a server without the route: ExecutorError no_logs, "this server keeps no task logs"', async () => {
    const { deps: d, id } = await deps();
    handler = (url) => (url.pathname.endsWith('/logs') ? NOT_FOUND : { status: 200, body: operation });
    const record = (await d.ledger.load(id))!;
    const error = await failure(readLogPage(d, record, {}));
    expect(error).toBeInstanceOf(ExecutorError);
    expect(error).toMatchObject({ code: 'no_logs', message: expect.stringMatching(/keeps no task logs/) });
    const iterated = await failure(
      (async () => {
        for await (const _ of followLogs(d, id)) expect.unreachable('a line');
      })(),
    );
    expect(iterated).toMatchObject({ code: 'no_logs' });
  });
});
