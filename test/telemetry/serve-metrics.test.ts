/**
 * Every server metric issue 16 names, read from `/metrics` of a real `terminus serve` (SQLite): open
 * 2025-era sessions and listen streams as gauges that follow a session's GET stream and a 2026
 * `subscriptions/listen` stream open and closed, and the group-commit batch size and commit time
 * moved by the writes of one task.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startServe, tempDir, type Served } from '../cli/helpers.js';
import { until } from '../runner/helpers.js';
import { EXT, PROTOCOL } from '../server/helpers.js';

const SLOW = 120_000;
const dir = tempDir('terminus-serve-metrics-');
let served: Served;
let base: string;

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
  base = served.url.replace(/\/mcp$/, '');
}, SLOW);
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

async function scrape(): Promise<string> {
  return (await fetch(`${base}/metrics`)).text();
}

/** One sample's value; 0 when prom-client has not printed that label set. */
function sample(exposition: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of exposition.split('\n')) {
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const got = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(match[3]);
  }
  return 0;
}

/** The issue's list, in its order: "tasks by status and tool" ... "store commit latency and batch size". */
const ISSUE_METRICS = [
  ['terminus_tasks', 'gauge'], // tasks by status and tool
  ['terminus_tasks_created_total', 'counter'], // creations
  ['terminus_task_outcomes_total', 'counter'], // outcomes
  ['terminus_task_run_seconds', 'histogram'], // task run time
  ['terminus_task_queue_wait_seconds', 'histogram'], // queue wait
  ['terminus_claim_duration_seconds', 'histogram'], // claim duration
  ['terminus_task_lease_expiries_total', 'counter'], // lease expiries
  ['terminus_task_reclaims_total', 'counter'], // re-claims
  ['terminus_http_requests_total', 'counter'], // requests by method, wire and answer code (429: rate-limited)
  ['terminus_http_request_duration_seconds', 'histogram'], // ... with latency histograms
  ['terminus_sessions', 'gauge'], // open sessions
  ['terminus_listen_streams', 'gauge'], // listen streams
  ['terminus_store_commit_seconds', 'histogram'], // store commit latency
  ['terminus_store_commit_batch_size', 'histogram'], // batch size
] as const;

async function open2025Session(): Promise<string> {
  const answer = await fetch(served.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'metrics-test', version: '1' } },
    }),
  });
  expect(answer.status).toBe(200);
  await answer.text();
  const session = answer.headers.get('mcp-session-id');
  expect(session).not.toBeNull();
  const initialized = await fetch(served.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session!,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return session!;
}

describe('terminus serve /metrics: every metric of the issue', () => {
  it(
    'names them all; sessions and listen streams follow what is open; commits report their batch size',
    async () => {
      const before = await scrape();
      for (const [name, type] of ISSUE_METRICS) expect(before, name).toContain(`# TYPE ${name} ${type}\n`);
      expect(sample(before, 'terminus_sessions')).toBe(0);

      // One task through AIP-151: its creation and its outcome are store writes (group commits).
      const commitsBefore = sample(before, 'terminus_store_commit_batch_size_count', { ok: 'true' });
      const created = await fetch(`${base}/v1/tools/slow_compute:run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { seconds: 0 } }),
      });
      expect(created.status).toBe(200);
      const { name: operation } = (await created.json()) as { name: string };
      const id = operation.replace(/^operations\//, '');
      await until(async () => {
        const op = (await (await fetch(`${base}/v1/operations/${id}`)).json()) as { done?: boolean };
        return op.done === true;
      }, 'the operation to be done');

      // A 2025-era session with its GET notification stream, and a 2026 task listen stream.
      const session = await open2025Session();
      const get = new AbortController();
      const stream2025 = await fetch(served.url, {
        signal: get.signal,
        headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      });
      expect(stream2025.status).toBe(200);
      const listen = new AbortController();
      const stream2026 = await fetch(served.url, {
        method: 'POST',
        signal: listen.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': PROTOCOL,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'sub',
          method: 'subscriptions/listen',
          params: {
            notifications: { taskIds: [id] },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': PROTOCOL,
              'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
            },
          },
        }),
      });
      expect(stream2026.status).toBe(200);

      const during = await scrape();
      expect(sample(during, 'terminus_sessions')).toBe(1);
      expect(sample(during, 'terminus_listen_streams', { wire: 'mcp-2025-11-25' })).toBe(1);
      expect(sample(during, 'terminus_listen_streams', { wire: 'mcp-tasks-ext' })).toBe(1);
      const commits = sample(during, 'terminus_store_commit_batch_size_count', { ok: 'true' }) - commitsBefore;
      // At least the create and the finish; never more commits than writes.
      expect(commits).toBeGreaterThanOrEqual(2);
      expect(sample(during, 'terminus_store_commit_batch_size_sum', { ok: 'true' })).toBeGreaterThanOrEqual(
        sample(during, 'terminus_store_commit_batch_size_count', { ok: 'true' }),
      );
      expect(sample(during, 'terminus_store_commit_seconds_count', { ok: 'true' })).toBe(
        sample(during, 'terminus_store_commit_batch_size_count', { ok: 'true' }),
      );
      expect(sample(during, 'terminus_tasks_created_total', { tool: 'slow_compute', wire: 'aip-151' })).toBe(1);
      expect(sample(during, 'terminus_task_lease_expiries_total', { tool: 'slow_compute' })).toBe(0);

      // Closing the streams and the session brings the gauges back to 0.
      get.abort();
      listen.abort();
      const deleted = await fetch(served.url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      });
      expect(deleted.status).toBe(200);
      await until(async () => {
        const after = await scrape();
        return (
          sample(after, 'terminus_sessions') === 0 &&
          sample(after, 'terminus_listen_streams', { wire: 'mcp-2025-11-25' }) === 0 &&
          sample(after, 'terminus_listen_streams', { wire: 'mcp-tasks-ext' }) === 0
        );
      }, 'sessions and listen streams back to 0');
    },
    SLOW,
  );
});
