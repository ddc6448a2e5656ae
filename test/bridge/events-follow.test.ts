/**
 * `terminus bridge` follows its upstream calls by the task's ordered events (issue 32): it drives
 * them through the executor, so against `terminus serve` the upstream sees `terminus/tasks/events`
 * reads, and `tasks/get` only for each result. The upstream's progress still reaches the host: as
 * the task's `statusMessage` on the native front (Tasks extension) and as `notifications/progress`
 * on the facade. A counting proxy stands between the bridge and the server.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startServe, tempDir, type Served } from '../cli/helpers.js';
import { startProxy, type Proxy } from '../executor/executor-helpers.js';
import { PROTOCOL, rpc } from '../server/helpers.js';
import { ledgerFacts, operationOf, startHttpBridge } from './helpers.js';

const SLOW = 180_000;
const EVENTS = 'terminus/tasks/events';
const dir = tempDir('terminus-bridge-events-');
const ledger = (): string => join(dir.path, 'b.db');
let served: Served;
let upstream: Proxy;
let url: string;

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
  upstream = await startProxy(served.url, () => ({ kind: 'forward' }));
  url = await startHttpBridge(dir.path, [
    '--upstream',
    `reports=${upstream.url}`,
    '--ledger',
    ledger(),
    '--inline-wait',
    '1',
  ]);
}, SLOW);
afterAll(async () => {
  await upstream?.close();
  await served?.stop();
  killAll();
  dir.remove();
});

/** The upstream requests about one upstream task, by method. */
function requestsFor(taskId: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of upstream.seen) {
    if (r.params.taskId !== taskId || r.method === undefined) continue;
    counts[r.method] = (counts[r.method] ?? 0) + 1;
  }
  return counts;
}

/** The upstream task id of the bridge's operation for `label`. */
function upstreamTaskOf(label: string): string {
  const at = upstream.seen.findIndex(
    (r) => r.method === 'tools/call' && (r.params.arguments as { label?: string } | undefined)?.label === label,
  );
  expect(at, `the upstream call of ${label}`).toBeGreaterThanOrEqual(0);
  // The first task read after the call is about its task (one call at a time here).
  const read = upstream.seen.slice(at + 1).find((r) => typeof r.params.taskId === 'string');
  expect(read, `a read of ${label}'s task`).toBeDefined();
  return read!.params.taskId as string;
}

describe('bridge: upstream calls followed by events', () => {
  it(
    'native front (Tasks extension): the upstream sees events reads, one tasks/get (the result); the progress is the statusMessage',
    async () => {
      const created = await rpc(url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 3, label: 'ev-native' },
      });
      expect(created.result.resultType).toBe('task');
      const taskId = created.result.taskId as string;
      const said: string[] = [];
      for (let i = 0; i < 60; i++) {
        const got = await rpc(url, 'tasks/get', { taskId });
        said.push(got.result.statusMessage as string);
        if (got.result.status === 'completed') break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(said).toContain('0/3: computing');
      const counts = requestsFor(upstreamTaskOf('ev-native'));
      expect(counts[EVENTS]).toBeGreaterThanOrEqual(2);
      expect(counts['tasks/get']).toBe(1);
      expect(ledgerFacts(ledger(), 'ev-native')).toEqual({ operations: 1, receipts: 1 });
    },
    SLOW,
  );

  it(
    'facade: the host that sent a progressToken gets the upstream progress, and the result, with events reads upstream',
    async () => {
      const host = new Client(
        { name: 'bridge-events-test', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: PROTOCOL } } },
      );
      await host.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        const progress: { progress: number; total?: number; message?: string }[] = [];
        const first = await host.callTool(
          { name: 'slow_compute', arguments: { seconds: 3, label: 'ev-facade' } },
          { onprogress: (p) => progress.push(p) },
        );
        expect(operationOf(first).id).toMatch(/^op_/);
        expect(progress.length).toBeGreaterThanOrEqual(1);
        expect(progress[0]).toMatchObject({ progress: 0, total: 3 });
        for (let i = 0; i < 20; i++) {
          const waited = await host.callTool({
            name: 'terminus_wait',
            arguments: { operation: operationOf(first).id },
          });
          const text = JSON.stringify(waited.content);
          if (text.includes('ev-facade: done after 3 s')) break;
          expect(i, 'the result within 20 waits').toBeLessThan(19);
        }
        const counts = requestsFor(upstreamTaskOf('ev-facade'));
        expect(counts[EVENTS]).toBeGreaterThanOrEqual(2);
        expect(counts['tasks/get']).toBe(1);
      } finally {
        await host.close();
      }
    },
    SLOW,
  );
});
