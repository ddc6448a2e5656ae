/**
 * Executor metrics of `terminus bridge` (issue 16): `GET /metrics` on its HTTP mode, and on a
 * listener of its own (`--metrics-port`) for a bridge on stdio. One call answered inline and one
 * past the inline wait (a handle, then `terminus_wait`) move the counters by exactly what happened.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, MAIN, start, startServe, tempDir, tsNode, type Served } from '../cli/helpers.js';
import { until } from '../runner/helpers.js';
import { connectBridge, hostCall, ledgerIn, operationOf, textOf, waitResult, type BridgeClient } from './helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-bridge-metrics-');
let served: Served;

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
}, SLOW);
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

/** The value of one sample of the exposition (0 when absent: prom-client omits untouched label sets). */
function sample(exposition: string, name: string, labels: Record<string, string>): number {
  for (const line of exposition.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const got = Object.fromEntries([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(match[3]);
  }
  return 0;
}

describe('terminus bridge metrics', () => {
  it(
    'on stdio, --metrics-port serves GET /metrics: operations by state, polls, receipts, UNKNOWN',
    async () => {
      let stderr = '';
      const bridge: BridgeClient = await connectBridge({
        ledger: ledgerIn(dir.path, 'stdio'),
        upstreams: [`reports=${served.url}`],
        extra: ['--metrics-port', '0'],
        onStderr: (text) => void (stderr += text),
      });
      try {
        // Printed on stderr: stdout is the MCP channel.
        const printed = /terminus bridge metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/;
        await until(() => printed.test(stderr), 'the metrics URL on stderr');
        const url = printed.exec(stderr)?.[1];
        expect(url).toBeDefined();
        const before = await (await fetch(url!)).text();
        expect(sample(before, 'terminus_executor_operations', { state: 'ACCEPTED' })).toBe(0);

        const inline = await hostCall(bridge.client, 'slow_compute', { seconds: 0, label: 'inline' });
        expect(textOf(inline)).toBe('inline: done after 0 s');
        const handle = await hostCall(bridge.client, 'slow_compute', { seconds: 4, label: 'later' });
        const waited = await waitResult(bridge.client, operationOf(handle).id);
        expect(textOf(waited)).toBe('later: done after 4 s');

        const answer = await fetch(url!);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
        const after = await answer.text();
        expect(sample(after, 'terminus_executor_receipts_total', { status: 'completed' })).toBe(2);
        expect(sample(after, 'terminus_executor_operations', { state: 'ACCEPTED' })).toBe(2);
        expect(sample(after, 'terminus_executor_operations', { state: 'WORKING' })).toBe(0);
        expect(sample(after, 'terminus_executor_operations', { state: 'UNKNOWN' })).toBe(0);
        expect(after).toContain('terminus_executor_operations{state="UNKNOWN"} 0');
        expect(sample(after, 'terminus_executor_state_entries_total', { state: 'ACCEPTED' })).toBe(2);
        expect(sample(after, 'terminus_executor_requests_total', { request: 'submit', outcome: 'ok' })).toBe(2);
        // A 4 s task polled at its 200 ms interval past a 2 s inline wait: status reads happened, and on
        // our server they are reads of the task's events.
        expect(sample(after, 'terminus_executor_requests_total', { request: 'events', outcome: 'ok' })).toBeGreaterThan(
          0,
        );
        // The metrics listener serves nothing else.
        expect((await fetch(url!.replace(/\/metrics$/, '/mcp'), { method: 'POST' })).status).toBe(404);
      } finally {
        await bridge.close();
      }
    },
    SLOW,
  );

  it(
    'on HTTP, GET /metrics is on the MCP port, behind the loopback Host check',
    async () => {
      const bridge = start(
        tsNode(
          MAIN,
          'bridge',
          '--port',
          '0',
          '--upstream',
          `reports=${served.url}`,
          '--ledger',
          join(dir.path, 'h.db'),
        ),
        { cwd: dir.path },
      );
      const mcp = (await bridge.waitFor(/http:\/\/127\.0\.0\.1:\d+\/mcp/, 'stdout')).trim();
      const metrics = mcp.replace(/\/mcp$/, '/metrics');
      const client = new Client({ name: 'metrics-test-host', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcp)));
      try {
        const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'http' } });
        expect(textOf(result)).toBe('http: done after 0 s');
        const after = await (await fetch(metrics)).text();
        expect(sample(after, 'terminus_executor_receipts_total', { status: 'completed' })).toBe(1);
        expect(sample(after, 'terminus_executor_operations', { state: 'ACCEPTED' })).toBe(1);
        expect(sample(after, 'terminus_executor_requests_total', { request: 'submit', outcome: 'ok' })).toBe(1);
        expect((await fetch(metrics, { method: 'POST' })).status).toBe(405);
        const port = new URL(metrics).port;
        const rebound = await rawGet(Number(port), '/metrics', 'evil.example');
        expect(rebound).toBe(403);
      } finally {
        await client.close();
      }
    },
    SLOW,
  );
});

/** A GET with a Host header of our choosing (fetch forbids setting it). */
async function rawGet(port: number, path: string, host: string): Promise<number> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
