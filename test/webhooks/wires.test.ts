/**
 * A call's own webhook on the 2025-11-25 wire (`params._meta["mcp-terminus.dev/webhook"]` beside
 * `params.task`), on SEP-1391 (the same `_meta` beside `operation`) and on AIP-151 (`webhook` in the
 * `:run` body), as on the Tasks extension: the task
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
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import { rpc } from '../server/helpers.js';
import { ALICE, aip, authenticate, BOB, eventually, Gates, LegacySession, testTools } from '../wires/helpers.js';

const policy = { allowHosts: ['127.0.0.1'] };
const secret = newSecret();
const received: {
  id: string;
  status: string;
  taskId: string;
  verified: boolean;
  headers: Record<string, unknown>;
}[] = [];
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
      received.push({ id, status: data.status, taskId: data.taskId, verified, headers: { ...req.headers } });
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

const ASYNC = { experimental: { [SEP1391_CAPABILITY]: {} } };
const HOOK = 'mcp-terminus.dev/webhook';
const taskCount = async () => (await store.listAllOwners({ limit: 1000 }, Date.now())).tasks.length;

describe("SEP-1391: a call's own webhook and the ordered events by token (issue 32)", () => {
  it('_meta beside operation stores it: the completion is POSTed with Standard Webhooks headers; tools/async/events reads every event once', async () => {
    const session = await LegacySession.open(url, ALICE, ASYNC);
    const token = 'sep-hook-1';
    const call = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'ok', text: 'x' },
      operation: { token },
      _meta: { [HOOK]: { url: hookUrl, secret } },
    });
    expect(call.error).toBeUndefined();
    expect(call.result.operation.token).toBe(token);
    const found = await store.lookupKey('auth:alice', token, Date.now());
    const taskId = found.kind === 'found' ? found.task.id : '';
    const rows = await deliveredFor(taskId);
    const completed = rows.find((r) => r.status === 'completed');
    expect(completed?.verified).toBe(true);
    expect(completed?.headers).toMatchObject({
      'webhook-id': expect.stringMatching(new RegExp(`^msg_${taskId}_\\d+$`)),
      'webhook-timestamp': expect.stringMatching(/^\d+$/),
      'webhook-signature': expect.stringMatching(/^v1,/),
    });

    // The status answer says where the events stand; the events read by token gives them, in order, once.
    const status = await session.request('tools/async/status', { token });
    expect(status.result.status).toBe('completed');
    const meta = status.result._meta['mcp-terminus.dev/events'];
    const first = await session.request('tools/async/events', { token, limit: 1 });
    expect(first.result).toMatchObject({ token, taskId, lastSeq: meta.lastSeq, skipped: 0, done: false });
    expect(first.result.events).toMatchObject([{ seq: 1, kind: 'status', status: 'working' }]);
    const rest = await session.request('tools/async/events', { token, cursor: first.result.cursor });
    expect(rest.result.done).toBe(true);
    const seqs = [...first.result.events, ...rest.result.events].map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual(Array.from({ length: meta.lastSeq }, (_, i) => i + 1));
    expect(rest.result.events.at(-1)).toMatchObject({ kind: 'status', status: 'completed' });
    expect(rest.result.cursor).toBe(meta.cursor);
    await session.close();
  });

  it('a bad webhook is -32602 naming the field, nothing stored, the token still free', async () => {
    const session = await LegacySession.open(url, ALICE, ASYNC);
    const before = await taskCount();
    const bad: [unknown, RegExp][] = [
      [{ url: 'not a url', secret }, /does not parse/],
      [{ url: 'http://169.254.169.254/latest', secret }, /refused.*--webhook-allow-host/],
      [{ url: 'http://10.1.2.3/hook', secret }, /private/],
      [{ url: hookUrl, secret: 'plain' }, /whsec_/],
      [{ url: { nested: { deeper: [1, 2, 3] } }, secret }, /webhook.url must be a string/],
      [{ url: hookUrl, secret, events: { all: true } }, /webhook.events must be/],
      ['http://example.com/hook', /webhook must be an object/],
      [{ url: `http://example.com/${'a'.repeat(100_000)}`, secret }, /webhook URL is too long/],
    ];
    for (const [webhook, message] of bad) {
      const reply = await session.request('tools/call', {
        name: 'work',
        arguments: { mode: 'ok' },
        operation: { token: 'sep-hook-bad' },
        _meta: { [HOOK]: webhook },
      });
      expect(reply.error?.code, JSON.stringify(webhook).slice(0, 80)).toBe(-32602);
      expect(reply.error?.message).toMatch(message);
      expect(reply.error?.message.length).toBeLessThan(600);
      expect(reply.error?.data?.field).toMatch(/^webhook/);
    }
    expect(await taskCount()).toBe(before);
    // Nothing was stored and the token was not burned: the same token with a good webhook works.
    const good = await session.request('tools/call', {
      name: 'work',
      arguments: { mode: 'ok' },
      operation: { token: 'sep-hook-bad' },
      _meta: { [HOOK]: { url: hookUrl, secret } },
    });
    expect(good.result?.operation?.token).toBe('sep-hook-bad');
    await session.close();
  });

  it('events by token refuse a cursor of another operation or principal, one in the future, and bad types; foreign tokens are "Invalid token"', async () => {
    const alice = await LegacySession.open(url, ALICE, ASYNC);
    const bob = await LegacySession.open(url, BOB, ASYNC);
    const start = async (session: LegacySession, token: string) => {
      const reply = await session.request('tools/call', {
        name: 'work',
        arguments: { mode: 'ok' },
        operation: { token },
      });
      expect(reply.error).toBeUndefined();
      return eventually(
        () => session.request('tools/async/events', { token }),
        (r) => r.result?.done === true,
      );
    };
    const a1 = await start(alice, 'sep-ev-a1');
    const a2 = await start(alice, 'sep-ev-a2');
    const b1 = await start(bob, 'sep-ev-b1');
    const refused = async (params: Record<string, unknown>, message: RegExp, field = 'cursor') => {
      const reply = await alice.request('tools/async/events', params);
      expect(reply.error?.code, JSON.stringify(params).slice(0, 80)).toBe(-32602);
      expect(reply.error?.message).toMatch(message);
      expect(reply.error?.message.length).toBeLessThan(600);
      if (field !== '') expect(reply.error?.data).toMatchObject({ field });
    };
    await refused({ token: 'sep-ev-a1', cursor: a2.result.cursor }, /belongs to another task/);
    await refused({ token: 'sep-ev-a1', cursor: b1.result.cursor }, /belongs to another task/);
    const [, tag] = String(a1.result.cursor).split('.');
    await refused({ token: 'sep-ev-a1', cursor: `999999.${tag}` }, /ahead of the task/);
    await refused({ token: 'sep-ev-a1', cursor: 'garbage' }, /malformed/);
    await refused(
      { token: 'sep-ev-a1', cursor: { nested: { deep: ['x'.repeat(50_000)] } } },
      /cursor must be a string/,
    );
    await refused({ token: 'sep-ev-a1', limit: 0 }, /limit must be an integer from 1 to 1000/, 'limit');
    await refused({ token: 'sep-ev-a1', limit: '10' }, /limit must be/, 'limit');
    await refused({ token: 'sep-ev-b1' }, /Invalid token/, '');
    await refused({ token: 'x'.repeat(100_000) }, /Invalid token/, '');
    await refused({ token: { nested: true } }, /token must be a string/, '');
    // Still serving.
    const again = await alice.request('tools/async/events', { token: 'sep-ev-a1' });
    expect(again.result.done).toBe(true);
    await alice.close();
    await bob.close();
  });
});

describe('bad webhook input on every wire: a short error naming the field, nothing stored, the server up', () => {
  it('Tasks extension, 2025-11-25 and AIP-151', async () => {
    const bad: [unknown, RegExp][] = [
      [
        { url: `http://example.com/${'a'.repeat(100_000)}`, secret },
        /webhook URL is too long: 100019 characters, at most 2048/,
      ],
      [
        { url: hookUrl, secret, events: { nested: ['x'.repeat(100_000)] } },
        /webhook.events must be "terminal" or "all", got .{0,45}$/,
      ],
      [{ url: [hookUrl], secret }, /webhook.url must be a string/],
      [{ url: hookUrl, secret: 42 }, /webhook.secret must be a string/],
      [null, /webhook must be an object/],
    ];
    const before = await taskCount();
    const session = await LegacySession.open(url, ALICE);
    for (const [webhook, message] of bad) {
      const label = JSON.stringify(webhook)?.slice(0, 60) ?? 'undefined';
      const ext = await rpc(
        url,
        'tools/call',
        { name: 'work', arguments: { mode: 'ok' } },
        {
          token: ALICE,
          meta: { [HOOK]: webhook, 'io.modelcontextprotocol/submissionKey': `bad-hook-${Math.random()}` },
        },
      );
      const legacy = await session.request('tools/call', {
        name: 'work',
        arguments: { mode: 'ok' },
        task: {},
        _meta: { [HOOK]: webhook },
      });
      for (const reply of [ext, legacy]) {
        expect(reply.error?.code, label).toBe(-32602);
        expect(reply.error?.message, label).toMatch(message);
        expect(reply.error?.message.length, label).toBeLessThan(600);
      }
      const run = await aip(base, 'POST', '/v1/tools/work:run', ALICE, { arguments: { mode: 'ok' }, webhook });
      expect(run.status, label).toBe(400);
      expect(JSON.stringify(run.body), label).toMatch(/webhook/);
      expect(JSON.stringify(run.body).length, label).toBeLessThan(1_000);
    }
    expect(await taskCount()).toBe(before);
    await session.close();
  });
});
