/**
 * A call's own webhook on the 2025-11-25 wire (`params._meta["mcp-terminus.dev/webhook"]` beside
 * `params.task`) and on AIP-151 (`webhook` in the `:run` body), as on the Tasks extension: the task
 * is stored with the endpoint, the real delivery loop POSTs its terminal state to a real receiver on
 * 127.0.0.1 signed with the call's secret, and bad webhook input is refused naming the field before
 * anything is stored.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/ports.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { WebhookOutbox } from '../../src/store/outbox-port.js';
import { startWebhookDelivery, type WebhookDelivery } from '../../src/webhooks/delivery.js';
import { newSecret, verify } from '../../src/webhooks/sign.js';
import { ALICE, aip, authenticate, eventually, Gates, LegacySession, testTools } from '../wires/helpers.js';

const policy = { allowHosts: ['127.0.0.1'] };
const secret = newSecret();
const received: { id: string; status: string; taskId: string; verified: boolean }[] = [];
let receiver: Server;
let hookUrl: string;
let base: string;
let url: string;
let close: () => Promise<void>;
const store = createMemoryTaskStore();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const ts = Number(req.headers['webhook-timestamp']);
      const data = (JSON.parse(body) as { data: { status: string; taskId: string } }).data;
      const verified = verify(secret, id, ts, body, String(req.headers['webhook-signature']));
      received.push({ id, status: data.status, taskId: data.taskId, verified });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const engine = createEngine({
    store,
    tools: testTools(new Gates()),
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
    webhooks: { policy },
  });
  const delivery: WebhookDelivery = startWebhookDelivery({
    outbox: store.webhooks as WebhookOutbox,
    node: 'n1',
    clock: systemClock,
    random: systemRandom,
    logger: silentLogger,
    policy,
    pollMs: 50,
  });
  engine.events.subscribe(() => delivery.wake());
  engine.start();
  const registry = createWireRegistry({ disabled: [] });
  const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters });
  const http = await server.serveHttp({ port: 0, authenticate });
  url = http.url;
  base = http.url.replace(/\/mcp$/, '');
  close = async () => {
    await http.close();
    await delivery.stop();
    await engine.stop();
    await store.close();
  };
});

afterAll(async () => {
  await close();
  await new Promise((resolve) => receiver.close(resolve));
});

const deliveredFor = (taskId: string) =>
  eventually(
    async () => received.filter((r) => r.taskId === taskId),
    (rows) => rows.some((r) => r.status === 'completed'),
  );

describe("a call's own webhook on the other wires", () => {
  it('2025-11-25: _meta beside params.task stores it; the completion is POSTed, signed with the call secret', async () => {
    const session = await LegacySession.open(url, ALICE);
    const reply = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'ok', text: 'x' },
      task: {},
      _meta: { 'mcp-terminus.dev/webhook': { url: hookUrl, secret } },
    });
    expect(reply.error).toBeUndefined();
    const taskId = reply.result.task.taskId as string;
    const rows = await deliveredFor(taskId);
    expect(rows.every((r) => r.verified)).toBe(true);
    expect(rows.find((r) => r.status === 'completed')?.id).toMatch(new RegExp(`^msg_${taskId}_\\d+$`));
    await session.close();
  });

  it('2025-11-25: a webhook without a task, or a bad one, is -32602 naming it; nothing is stored', async () => {
    const session = await LegacySession.open(url, ALICE);
    const before = (await store.listAllOwners({ limit: 1000 }, Date.now())).tasks.length;
    const plain = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'ok' },
      _meta: { 'mcp-terminus.dev/webhook': { url: hookUrl, secret } },
    });
    expect(plain.error?.code).toBe(-32602);
    expect(plain.error?.message).toContain('needs a task');
    const bad = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'ok' },
      task: {},
      _meta: { 'mcp-terminus.dev/webhook': { url: 'http://10.1.2.3/hook', secret } },
    });
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toContain('private');
    expect((await store.listAllOwners({ limit: 1000 }, Date.now())).tasks.length).toBe(before);
    await session.close();
  });

  it('AIP-151: webhook in the :run body stores it; the completion is POSTed; a bad one is 400', async () => {
    const run = await aip(base, 'POST', '/v1/tools/work:run', ALICE, {
      arguments: { mode: 'ok' },
      webhook: { url: hookUrl, secret, events: 'all' },
    });
    expect(run.status).toBe(200);
    const taskId = String(run.body.name).split('/').at(-1) as string;
    const rows = await deliveredFor(taskId);
    expect(rows.every((r) => r.verified)).toBe(true);
    // events "all": the first working is delivered too.
    expect(rows.map((r) => r.status)).toContain('working');
    const bad = await aip(base, 'POST', '/v1/tools/work:run', ALICE, {
      arguments: { mode: 'ok' },
      webhook: { url: hookUrl, secret: 'plain' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('whsec_');
  });
});
