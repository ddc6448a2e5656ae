/**
 * Webhooks end to end (issue 32) with the built `terminus serve`: a receiver that is down while
 * tasks end gets every status event once it comes back, a `kill -9` of the server in the middle of
 * a delivery loses none (the restarted server on the same file delivers the rest), duplicates
 * carry the same `webhook-id` and body, and every request is signed as Standard Webhooks says.
 * Also: bad webhook input at submit is a clear error, checked before anything is written.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret, verify } from '../../src/webhooks/sign.js';
import { spawnSync } from 'node:child_process';
import { assertBuilt, BUILT, killAll, tempDir } from '../cli/helpers.js';
import { serveBuilt, type BuiltServe } from '../fixtures/built-serve.js';
import { createTask, pollUntil, rpc } from '../server/helpers.js';

const SLOW = 120_000;
/**
 * The lease of a delivery claimed by the killed server: the restarted one sends those rows again
 * only once it lapses, so the wait for every event after the restart is counted from it (with the
 * default 30 s lease and a 30 s wait, the test raced the lease and failed under CI load).
 */
const LEASE_MS = 12_000;
const dir = tempDir('terminus-webhooks-');
const secret = newSecret();

interface Received {
  readonly id: string;
  readonly body: string;
  readonly verified: boolean;
}

/** A receiver whose answer is switched by the test: down (503), slow (held), or up (204). */
class Receiver {
  mode: 'down' | 'slow' | 'up' = 'down';
  readonly received: Received[] = [];
  readonly attempts: string[] = [];
  server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${address.port}/hook`;
  }

  async #handle(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const id = String(req.headers['webhook-id']);
    this.attempts.push(id);
    if (this.mode === 'down') {
      res.writeHead(503).end();
      return;
    }
    if (this.mode === 'slow') return; // held open: the sender dies waiting
    const ts = Number(req.headers['webhook-timestamp']);
    const verified = verify(secret, id, ts, body, String(req.headers['webhook-signature']));
    this.received.push({ id, body, verified });
    res.writeHead(204).end();
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const receiver = new Receiver();
let served: BuiltServe | undefined;

beforeAll(async () => {
  assertBuilt();
  await receiver.start();
}, SLOW);
afterAll(async () => {
  await served?.stop().catch(() => undefined);
  killAll();
  await receiver.close();
  dir.remove();
});

async function until(check: () => boolean | Promise<boolean>, budgetMs: number, what: string): Promise<void> {
  const end = Date.now() + budgetMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhooks through the built terminus serve', () => {
  it(
    'a receiver down while tasks end, then a kill -9 mid-delivery: every status event arrives after the restart, duplicates only with the same id',
    async () => {
      const db = join(dir.path, 'server.db');
      const flags = [
        '--webhook',
        receiver.url,
        '--webhook-secret',
        secret,
        '--webhook-events',
        'all',
        '--webhook-allow-host',
        '127.0.0.1',
        '--webhook-lease',
        `${LEASE_MS}ms`,
        '--webhook-retry',
        '100ms,200ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms',
      ];
      served = await serveBuilt(db, flags);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        ids.push(await createTask(served.url, 'build_report', { title: `r${i}`, sections: 1, sectionSeconds: 0 }));
      }
      for (const id of ids) await pollUntil(served.url, id, (t) => t.status === 'completed');
      // Down: attempts are made and refused; nothing is received.
      await until(() => receiver.attempts.length >= 8, 20_000, 'refused attempts');
      expect(receiver.received).toEqual([]);
      // Slow: the next attempts hang, and the server dies in the middle of them.
      receiver.mode = 'slow';
      const before = receiver.attempts.length;
      await until(() => receiver.attempts.length > before, 20_000, 'an attempt in flight');
      await served.kill9();
      receiver.server?.closeAllConnections();
      receiver.mode = 'up';
      served = await served.again();
      // The expected events: each task's status events, read from the task itself.
      const expected = new Set<string>();
      for (const taskId of ids) {
        const page = await rpc(served.url, 'terminus/tasks/events', { taskId });
        for (const e of page.result.events as { seq: number; kind: string }[]) {
          if (e.kind === 'status') expected.add(`msg_${taskId}_${e.seq}`);
        }
      }
      expect(expected.size).toBe(8); // working and completed, four tasks
      // A row claimed before the kill is sent again once its lease lapses, then within a poll (1 s).
      await until(
        () => [...expected].every((id) => receiver.received.some((r) => r.id === id)),
        LEASE_MS + 30_000,
        'every event',
      );
      expect(receiver.received.every((r) => r.verified)).toBe(true);
      // At least once: any id seen twice came with the same body.
      const bodies = new Map<string, string>();
      for (const r of receiver.received) {
        expect(bodies.get(r.id) ?? r.body, r.id).toBe(r.body);
        bodies.set(r.id, r.body);
      }
      for (const taskId of ids) {
        const terminal = receiver.received.find(
          (r) => r.id.startsWith(`msg_${taskId}_`) && r.body.includes('"completed"'),
        );
        expect(JSON.parse(terminal!.body)).toMatchObject({
          type: 'task.completed',
          data: { taskId, status: 'completed' },
        });
      }
      // Delivery records: `terminus webhooks` reads them from the server's file, without the secret.
      const shown = spawnSync(process.execPath, [BUILT, 'webhooks', ids[0]!, '--db', db, '--json'], {
        encoding: 'utf8',
      });
      expect(shown.status).toBe(0);
      const records = JSON.parse(shown.stdout) as { state: string; attemptLog: { statusCode: number | null }[] }[];
      expect(records.map((r) => r.state)).toEqual(['delivered', 'delivered']);
      expect(records.flatMap((r) => r.attemptLog.map((a) => a.statusCode))).toContain(503);
      expect(shown.stdout).not.toContain(secret);
      // Metrics.
      const metrics = await (await fetch(served.url.replace(/\/mcp$/, '/metrics'))).text();
      expect(metrics).toMatch(/terminus_webhook_deliveries_total\{outcome="delivered"\} \d+/);
      expect(metrics).toMatch(/terminus_webhook_pending 0/);
    },
    SLOW,
  );

  it(
    'bad webhook input at submit is a clear -32602 naming what is wrong, and no task is stored',
    async () => {
      served ??= await serveBuilt(join(dir.path, 'server.db'));
      const tasks = (): number => {
        const db = new Database(join(dir.path, 'server.db'), { readonly: true });
        try {
          return db.prepare('SELECT count(*) FROM tasks').pluck().get() as number;
        } finally {
          db.close();
        }
      };
      const before = tasks();
      const call = (webhook: unknown) =>
        rpc(
          served!.url,
          'tools/call',
          { name: 'build_report', arguments: { title: 'x', sections: 1, sectionSeconds: 0 } },
          { meta: { 'mcp-terminus.dev/webhook': webhook } },
        );
      for (const [webhook, text] of [
        [{ url: 'not a url', secret }, 'does not parse'],
        [{ url: 'ftp://example.com/x', secret }, 'must be http:// or https://'],
        [{ url: 'http://169.254.169.254/latest', secret }, 'link-local'],
        [{ url: 'http://10.1.2.3/hook', secret }, 'private'],
        [{ url: 'http://localhost:9/hook', secret }, 'loopback'],
        [{ url: 'https://example.com/hook', secret: 'plain' }, 'whsec_'],
        [{ url: 'https://example.com/hook', secret, events: 'some' }, 'terminal" or "all"'],
        ['https://example.com/hook', 'must be an object'],
      ] as const) {
        const answer = await call(webhook);
        expect(answer.error?.code, JSON.stringify(webhook)).toBe(-32602);
        expect(answer.error?.message, JSON.stringify(webhook)).toContain(text);
      }
      expect(tasks()).toBe(before); // nothing stored for any of them
    },
    SLOW,
  );
});
