/**
 * The bench's C load generator (`bench/lib/wrk.ts`, issue 31 item 2) against a small JSON-RPC
 * server on 127.0.0.1: the request a client sends is captured whole (headers and body), wrk sends
 * it back with a fresh id per request from every template in turn, and an answer that is not a 200
 * carrying the expected text fails the run instead of being counted. Needs Debian's `wrk` (`.ci/run`
 * installs it); its absence is a failure here, never a skip. Structure only: no timing is asserted.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureRequest, runWrk, wrkVersion } from '../../bench/lib/wrk.js';

interface Seen {
  readonly id: unknown;
  readonly lane: string | undefined;
  readonly method: unknown;
}

const seen: Seen[] = [];
let failEvery = 0; // answer every Nth request with a 500 (0: never)
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const message = JSON.parse(body) as { id: unknown; method: unknown };
      seen.push({ id: message.id, lane: req.headers['x-lane'] as string | undefined, method: message.method });
      if (failEvery > 0 && seen.length % failEvery === 0) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { status: 'working' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (lane: string, id: number) => () =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-lane': lane },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/get', params: { taskId: `task-${lane}` } }),
  }).then((r) => r.text());

describe('wrk load (bench/lib/wrk.ts)', () => {
  it('is installed (apt-get install wrk)', () => {
    expect(wrkVersion(), 'wrk is not on the PATH: apt-get install wrk').toMatch(/^wrk /);
  });

  it('sends each captured request in turn, each with an id of its own, and counts the answers', async () => {
    {
      const templates = [await captureRequest(post('a', 7)), await captureRequest(post('b', 8))];
      expect(templates[0]!.headers['x-lane']).toBe('a');
      expect(templates[0]!.before + '7' + templates[0]!.after).toBe(
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { taskId: 'task-a' } }),
      );
      seen.length = 0;
      failEvery = 0;
      const result = await runWrk({ templates, seconds: 1, expect: '"working"' });
      expect(result.requests).toBeGreaterThan(10);
      expect(Number.isFinite(result.perSecond) && result.perSecond > 0).toBe(true);
      expect(result.p50Ms).toBeLessThanOrEqual(result.p99Ms);
      // Every request reached the server (wrk may close with some still unanswered).
      expect(seen.length).toBeGreaterThanOrEqual(result.requests);
      expect(new Set(seen.map((s) => s.lane))).toEqual(new Set(['a', 'b']));
      expect(new Set(seen.map((s) => s.id)).size).toBe(seen.length);
      expect(seen.every((s) => typeof s.id === 'number' && s.method === 'tasks/get')).toBe(true);
    }
  }, 60_000);

  it('fails the run when an answer is not a 200 with the expected text', async () => {
    const templates = [await captureRequest(post('a', 1))];
    failEvery = 5;
    try {
      await expect(runWrk({ templates, seconds: 1, expect: '"working"' })).rejects.toThrow(
        /answers without "working".*the first: 500/,
      );
      failEvery = 0;
      await expect(runWrk({ templates, seconds: 1, expect: '"completed"' })).rejects.toThrow(
        /answers without "completed"/,
      );
    } finally {
      failEvery = 0;
    }
  }, 60_000);

  it('captures exactly one request with a numeric id, else says what it saw', async () => {
    await expect(
      captureRequest(async () => {
        await post('a', 1)();
        await post('b', 2)();
      }),
    ).rejects.toThrow('expected one request to capture, saw 2');
    await expect(
      captureRequest(() =>
        fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/x' }) }),
      ),
    ).rejects.toThrow('no numeric id');
  });
});
