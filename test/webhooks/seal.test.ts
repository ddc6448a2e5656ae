/**
 * Webhook secrets at rest (issue 32, loose ends): with a server key, no secret (the caller's nor the
 * operator's) is in the task store's file, and the delivery loop given the key signs with the real
 * secret; without the key, or with another one, an attempt fails naming what to do and is retried.
 * Before the key existed every secret was in the database in plain text.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/ports.js';
import { systemClock, systemRandom } from '../../src/core/system.js';
import type { WebhookOutbox } from '../../src/store/outbox-port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { startWebhookDelivery } from '../../src/webhooks/delivery.js';
import type { PostOutcome } from '../../src/webhooks/post.js';
import { isSealed, openSecret, secretsKey } from '../../src/webhooks/seal.js';
import { newSecret, verify } from '../../src/webhooks/sign.js';
import { engineFor, OWNER, text, tool, until, untilStatus } from '../runner/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'terminus-seal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'k'.repeat(16) + 'Zq3rT8vW1xY5aB7cD9eF';
const OTHER = 'o'.repeat(40);
const done = tool('done', async () => text('ok'));

interface Sent {
  readonly id: string;
  readonly timestamp: number;
  readonly body: string;
  readonly signature: string;
}

/** The delivery loop with a stub POST (204) until `count` attempts were made; returns what it sent and recorded. */
async function deliver(
  outbox: WebhookOutbox,
  keys: readonly string[] | undefined,
  taskId: string,
  count: number,
  retryScheduleMs: number[] = [60_000],
) {
  const sent: Sent[] = [];
  const post = async (_url: string, body: string, headers: Readonly<Record<string, string>>): Promise<PostOutcome> => {
    sent.push({
      id: headers['webhook-id'] as string,
      timestamp: Number(headers['webhook-timestamp']),
      body,
      signature: headers['webhook-signature'] as string,
    });
    return { statusCode: 204, error: null };
  };
  const loop = startWebhookDelivery({
    outbox,
    node: 'n1',
    clock: systemClock,
    random: systemRandom,
    logger: silentLogger,
    policy: {},
    post,
    pollMs: 20,
    retryScheduleMs,
    ...(keys === undefined ? {} : { keys }),
  });
  try {
    await until(async () => {
      const rows = await outbox.readDeliveries(null, taskId);
      return rows.reduce((n, r) => n + r.attemptLog.length, 0) >= count;
    }, 'the delivery attempts');
  } finally {
    await loop.stop();
  }
  return { sent, rows: await outbox.readDeliveries(null, taskId) };
}

describe('webhook secrets at rest', () => {
  it('with a key, neither secret is in the database file, and the loop given the key signs with the real ones', async () => {
    const path = join(dir, 'sealed.db');
    const store = await openSqliteTaskStore({ path });
    const operatorSecret = newSecret();
    const callSecret = newSecret();
    const engine = engineFor(store, [done], {
      webhooks: {
        keys: [KEY],
        endpoints: [{ url: 'http://operator.example/hook', secret: operatorSecret, events: 'terminal' }],
      },
    });
    engine.start();
    try {
      const created = await engine.submit({
        owner: OWNER,
        tool: 'done',
        args: {},
        wire: 'mcp-tasks-ext',
        webhook: { url: 'http://93.184.215.14/hook', secret: callSecret },
      });
      await untilStatus(store, created.task.id, (t) => t.status === 'completed');
      await engine.stop();
      const rows = await store.webhooks!.readDeliveries(null, created.task.id);
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(isSealed(row.secret)).toBe(true);
      const file = readFileSync(path).toString('latin1') + readFileSync(`${path}-wal`).toString('latin1');
      for (const secret of [callSecret, operatorSecret]) {
        expect(file).not.toContain(secret.slice('whsec_'.length, 'whsec_'.length + 24));
      }
      const { sent } = await deliver(store.webhooks!, [OTHER, KEY], created.task.id, 2);
      const byUrl = new Map(rows.map((r) => [r.endpoint, r.url]));
      expect(byUrl.get(1)).toBe('http://93.184.215.14/hook');
      const secrets = [callSecret, operatorSecret];
      for (const s of sent) {
        expect(secrets.some((secret) => verify(secret, s.id, s.timestamp, s.body, s.signature))).toBe(true);
      }
    } finally {
      await engine.stop();
      await store.close();
    }
  });

  it('without the key that sealed it, an attempt fails naming the flag and the row is retried', async () => {
    const store = await openSqliteTaskStore({ path: join(dir, 'nokey.db') });
    const engine = engineFor(store, [done], {
      webhooks: { keys: [KEY], endpoints: [{ url: 'http://h.example/', secret: newSecret(), events: 'terminal' }] },
    });
    engine.start();
    try {
      const created = await engine.submit({ owner: OWNER, tool: 'done', args: {}, wire: 'mcp-tasks-ext' });
      await untilStatus(store, created.task.id, (t) => t.status === 'completed');
      await engine.stop();
      for (const [keys, why] of [
        [undefined, 'no --webhook-key was given'],
        [[OTHER], 'it was sealed with another --webhook-key'],
      ] as const) {
        const before = (await store.webhooks!.readDeliveries(null, created.task.id))[0]?.attemptLog.length ?? 0;
        const again = Array<number>(50).fill(0);
        const { sent, rows } = await deliver(store.webhooks!, keys, created.task.id, before + 1, again);
        expect(sent).toEqual([]);
        expect(rows[0]?.state).toBe('pending');
        expect(rows[0]?.attemptLog.at(-1)?.error).toContain(why);
      }
    } finally {
      await engine.stop();
      await store.close();
    }
  });

  it('a short key is refused; an unsealed secret (stored before any key) opens as it is', () => {
    expect(() => secretsKey('too short')).toThrow(/at least 32 characters/);
    const plain = newSecret();
    expect(openSecret(plain, [])).toBe(plain);
    expect(openSecret(plain, [secretsKey(KEY)])).toBe(plain);
  });
});
