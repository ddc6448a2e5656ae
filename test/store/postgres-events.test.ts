import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../src/store/events.js';
import { createPostgresEvents, type PostgresTaskEvents } from '../../src/store/postgres/index.js';
import { adminPool, failWithoutDatabase, PG_URL } from './postgres-fixture.js';

/** Resolves when `predicate` holds, polling every 20 ms; rejects after `ms` with `what`. */
async function eventually(what: string, predicate: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

if (PG_URL === '') {
  describe('PostgreSQL LISTEN/NOTIFY events', failWithoutDatabase);
} else {
  const admin = adminPool();
  afterAll(() => admin.end());

  describe('PostgreSQL LISTEN/NOTIFY events', () => {
    const open: PostgresTaskEvents[] = [];
    const channel = (): string => `terminus_test_${randomBytes(4).toString('hex')}`;
    const events = (ch: string): PostgresTaskEvents => {
      const e = createPostgresEvents({
        connectionString: PG_URL,
        channel: ch,
        reconnectMinMs: 20,
        reconnectMaxMs: 200,
      });
      open.push(e);
      return e;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((e) => e.close()));
    });

    it('an event published on one node arrives on another, and once on the publisher itself', async () => {
      const ch = channel();
      const nodeA = events(ch);
      const nodeB = events(ch);
      await Promise.all([nodeA.ready(), nodeB.ready()]);
      const onA: TaskEvent[] = [];
      const onB: TaskEvent[] = [];
      nodeA.subscribe((e) => onA.push(e));
      nodeB.subscribe((e) => onB.push(e));

      nodeA.publish({ taskId: 't1', kind: 'cancelled' });
      nodeB.publish({ taskId: 't2', kind: 'input_received' });
      await eventually('both events on both nodes', () => onA.length >= 2 && onB.length >= 2);
      // A little longer: an echo of the node's own NOTIFY would show up as a third event.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const sort = (list: TaskEvent[]) => [...list].sort((x, y) => x.taskId.localeCompare(y.taskId));
      const expected = [
        { taskId: 't1', kind: 'cancelled' },
        { taskId: 't2', kind: 'input_received' },
      ];
      expect(sort(onA)).toEqual(expected);
      expect(sort(onB)).toEqual(expected);
    });

    it('another channel does not hear it; an unsubscribed listener stops hearing', async () => {
      const nodeA = events(channel());
      const nodeB = events(channel());
      await Promise.all([nodeA.ready(), nodeB.ready()]);
      const heard: TaskEvent[] = [];
      const off = nodeB.subscribe((e) => heard.push(e));
      nodeA.publish({ taskId: 'x', kind: 'created' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toEqual([]);
      off();
      nodeB.publish({ taskId: 'y', kind: 'created' });
      expect(heard).toEqual([]);
    });

    it('a NOTIFY sent with SQL by anything else is heard; a malformed payload is ignored', async () => {
      const ch = channel();
      const node = events(ch);
      await node.ready();
      const heard: TaskEvent[] = [];
      node.subscribe((e) => heard.push(e));
      await admin.query('SELECT pg_notify($1, $2)', [ch, 'not json']);
      await admin.query('SELECT pg_notify($1, $2)', [ch, JSON.stringify({ taskId: 'z', kind: 'no-such-kind' })]);
      await admin.query('SELECT pg_notify($1, $2)', [ch, JSON.stringify({ taskId: 'z', kind: 'terminal' })]);
      await eventually('the valid event', () => heard.length >= 1);
      expect(heard).toEqual([{ taskId: 'z', kind: 'terminal' }]);
    });

    it('the listener reconnects after its connection is killed, and hears events again', async () => {
      const ch = channel();
      const sender = events(ch);
      const receiver = events(ch);
      await Promise.all([sender.ready(), receiver.ready()]);
      const heard: string[] = [];
      receiver.subscribe((e) => heard.push(e.taskId));

      const killed = await admin.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE query = $1`,
        [`LISTEN "${ch}"`],
      );
      expect(killed.rows.length).toBe(2);
      // Keep publishing until one arrives: events sent while the listener is down are lost by
      // design (the polling bound covers them), so only a later one proves the reconnect.
      let n = 0;
      await eventually(
        'an event after the reconnect',
        () => {
          sender.publish({ taskId: `after-${(n += 1)}`, kind: 'progress' });
          return heard.some((id) => id.startsWith('after-'));
        },
        10_000,
      );
      await receiver.ready();
    });

    it('close() stops delivery from other nodes and ends its connections', async () => {
      const ch = channel();
      const sender = events(ch);
      const receiver = events(ch);
      await Promise.all([sender.ready(), receiver.ready()]);
      const heard: TaskEvent[] = [];
      receiver.subscribe((e) => heard.push(e));
      await receiver.close();
      sender.publish({ taskId: 'late', kind: 'terminal' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(heard).toEqual([]);
      const listeners = await admin.query(`SELECT pid FROM pg_stat_activity WHERE query = $1 AND state = 'idle'`, [
        `LISTEN "${ch}"`,
      ]);
      expect(listeners.rows.length).toBe(1);
      await expect(receiver.ready()).rejects.toThrow(/closed/);
    });

    it('the events of one turn leave in one NOTIFY statement, and every one arrives', async () => {
      const ch = channel();
      const pool = new pg.Pool({ connectionString: PG_URL, max: 3 });
      const notifies: string[] = [];
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
          const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string }).text ?? '');
          if (text.includes('pg_notify')) notifies.push(text);
          return query(...args);
        };
      });
      try {
        const sender = createPostgresEvents({ pool, channel: ch });
        open.push(sender);
        const receiver = events(ch);
        await Promise.all([sender.ready(), receiver.ready()]);
        const heard: string[] = [];
        receiver.subscribe((e) => heard.push(e.taskId));
        for (let i = 0; i < 16; i += 1) sender.publish({ taskId: `t${i}`, kind: 'terminal' });
        await eventually('16 events on the other node', () => heard.length >= 16);
        expect(notifies).toHaveLength(1);
        expect([...heard].sort()).toEqual(Array.from({ length: 16 }, (_, i) => `t${i}`).sort());
      } finally {
        await Promise.all(open.splice(0).map((e) => e.close()));
        await pool.end();
      }
    });

    it('a local event (a task created already claimed here) is delivered here and not sent to other nodes', async () => {
      const ch = channel();
      const nodeA = events(ch);
      const nodeB = events(ch);
      await Promise.all([nodeA.ready(), nodeB.ready()]);
      const onA: string[] = [];
      const onB: string[] = [];
      nodeA.subscribe((e) => onA.push(e.taskId));
      nodeB.subscribe((e) => onB.push(e.taskId));
      nodeA.publish({ taskId: 'leased', kind: 'created', local: true });
      nodeA.publish({ taskId: 'unleased', kind: 'created' });
      await eventually('the unleased task on the other node', () => onB.includes('unleased'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(onA).toEqual(['leased', 'unleased']);
      expect(onB).toEqual(['unleased']);
    });
  });
}
