/**
 * An upstream that does not answer: the bridge still starts and serves the model's tools, a call of
 * the upstream's tool is a tool error that names the upstream and says to try again (never a
 * crash, never "unknown tool"), and an unknown tool of a reachable bridge stays -32602.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, tempDir } from '../cli/helpers.js';
import { connectBridge, hostCall, ledgerIn, textOf, type BridgeClient } from './helpers.js';

const dir = tempDir('terminus-bridge-down-');
let bridge: BridgeClient;

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  bridge = await connectBridge({
    ledger: ledgerIn(dir.path, 'down'),
    upstreams: [`reports=http://127.0.0.1:${await closedPort()}/mcp`],
  });
}, 60_000);
afterAll(async () => {
  await bridge?.close();
  killAll();
  dir.remove();
});

describe('terminus bridge with an unreachable upstream', () => {
  it('lists the terminus_* tools and answers a call with a tool error naming the upstream', async () => {
    const { tools } = await bridge.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'terminus_cancel',
      'terminus_logs',
      'terminus_operations',
      'terminus_respond',
      'terminus_status',
      'terminus_wait',
    ]);
    const answer = await hostCall(bridge.client, 'slow_compute', { seconds: 1 });
    expect(answer.isError).toBe(true);
    expect(textOf(answer)).toMatch(/unreachable upstream: reports .*Try again later/);
    const none = await hostCall(bridge.client, 'terminus_operations');
    expect(textOf(none)).toMatch(/No operations/);
  });
});
