import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from '../../core/ports.js';
import { quoteIdent } from '../../sql/pg-db.js';
import { describe } from '../../sql/pg-errors.js';
import { poolFor, type ConnectOptions } from '../../sql/pg-pool.js';
import type { TaskEvent, TaskEventKind, TaskEvents } from '../events.js';

export interface PostgresEventsOptions extends ConnectOptions {
  /** LISTEN/NOTIFY channel; every node of one deployment MUST use the same. Default `terminus_tasks`. */
  readonly channel?: string;
  readonly logger?: Logger;
  /** First and longest wait before re-connecting the listener. Defaults 100 ms and 5000 ms. */
  readonly reconnectMinMs?: number;
  readonly reconnectMaxMs?: number;
}

export interface PostgresTaskEvents extends TaskEvents {
  /** Resolves once the listener has run LISTEN (after a reconnect too: the next success). */
  ready(): Promise<void>;
  /** Stops listening, waits for NOTIFYs in flight and ends the pool if it made one. */
  close(): Promise<void>;
}

const KINDS: ReadonlySet<TaskEventKind> = new Set([
  'created',
  'cancelled',
  'input_requested',
  'input_received',
  'progress',
  'terminal',
  'log',
]);

/** Every NOTIFY of one event-loop turn in one statement: one round trip, one commit of the queue. */
const NOTIFY = `SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload`;

/**
 * `TaskEvents` across nodes with LISTEN/NOTIFY: `publish` delivers to this process's listeners at
 * once and sends `pg_notify(channel, '{"taskId","kind","origin"}')`, the events of one event-loop
 * turn in one statement (a `local` event is not sent); a dedicated connection LISTENs and hands
 * other nodes' events to the listeners (its own echoes are dropped by `origin`). The listener
 * reconnects after any error, with backoff from `reconnectMinMs` doubling to `reconnectMaxMs`.
 *
 * Events are wake-ups only. NOTIFY is not durable: an event sent while a listener is disconnected
 * is lost, and nothing replays it. What bounds the delay then is the polling every reader does
 * anyway (engine defaults): an idle runner looks for new work every `claimIntervalMs` (250 ms,
 * jittered to at most 313 ms); a running handler sees a cancel or an input response from another
 * node at its next heartbeat (`heartbeatMs`, leaseMs / 3 = 3.3 s); a blocking read
 * (`waitForChange`) re-reads the store at least every 500 ms. So a lost event delays a wake-up
 * by at most those bounds, never loses a state change: the store is the truth.
 *
 * @example
 * ```ts
 * import { createPostgresEvents, openPostgresTaskStore } from 'mcp-terminus/postgres';
 * const url = 'postgres://terminus@db.internal/terminus';
 * const store = await openPostgresTaskStore({ connectionString: url });
 * const events = createPostgresEvents(url);
 * const engine = createEngine({ store, events, tools, clock: systemClock, ids: systemIds });
 * // on shutdown: await engine.stop(); await events.close(); await store.close();
 * ```
 */
export function createPostgresEvents(source: Pool | string | PostgresEventsOptions): PostgresTaskEvents {
  const options: PostgresEventsOptions =
    typeof source === 'string' ? { connectionString: source } : isPool(source) ? { pool: source } : source;
  const logger = options.logger;
  // One connection listens, one or two send: a small pool is enough.
  const connection = poolFor({ maxConnections: 3, ...options }, 'mcp-terminus-events');
  const channel = options.channel ?? 'terminus_tasks';
  const minMs = options.reconnectMinMs ?? 100;
  const maxMs = options.reconnectMaxMs ?? 5000;
  const origin = randomUUID();
  const listeners = new Set<(event: TaskEvent) => void>();
  const inFlight = new Set<Promise<unknown>>();
  let listener: PoolClient | null = null;
  let listening = false;
  let closed = false;
  let backoffMs = minMs;
  let timer: NodeJS.Timeout | null = null;
  let readyWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let outgoing: { readonly taskId: string; readonly payload: string }[] = [];

  const send = (): void => {
    const batch = outgoing;
    outgoing = [];
    if (batch.length === 0 || closed) return;
    const sent = connection.pool
      .query(NOTIFY, [channel, batch.map((e) => e.payload)])
      .catch((error: unknown) => {
        // Lossy by design: readers poll within the bounds documented above.
        logger?.warn('postgres events: NOTIFY failed', {
          taskIds: batch.map((e) => e.taskId).slice(0, 10),
          error: describe(error),
        });
      })
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  };

  const deliver = (event: TaskEvent): void => {
    for (const l of [...listeners]) {
      try {
        l(event);
      } catch (error) {
        logger?.error('postgres events: listener threw', { error: describe(error) });
      }
    }
  };

  const onNotification = (message: { channel: string; payload?: string }): void => {
    if (message.channel !== channel || message.payload === undefined) return;
    const event = parse(message.payload);
    if (event === null) {
      logger?.warn('postgres events: ignored a malformed payload', { payload: message.payload.slice(0, 200) });
      return;
    }
    if (event.origin !== origin) deliver({ taskId: event.taskId, kind: event.kind });
  };

  const scheduleReconnect = (): void => {
    if (closed || timer !== null) return;
    const wait = backoffMs;
    backoffMs = Math.min(maxMs, backoffMs * 2);
    timer = setTimeout(() => {
      timer = null;
      void listen();
    }, wait);
    timer.unref();
  };

  const drop = (client: PoolClient, error: unknown): void => {
    if (listener !== client) return;
    listener = null;
    listening = false;
    client.removeListener('notification', onNotification);
    client.release(error instanceof Error ? error : new Error(String(error)));
    if (!closed) {
      logger?.warn('postgres events: listener connection lost; reconnecting', { error: describe(error) });
      scheduleReconnect();
    }
  };

  const listen = async (): Promise<void> => {
    if (closed || listener !== null) return;
    let client: PoolClient | undefined;
    try {
      client = await connection.pool.connect();
      const c = client;
      if (closed) {
        c.release();
        return;
      }
      c.on('notification', onNotification);
      c.on('error', (error) => drop(c, error));
      c.on('end', () => drop(c, new Error('listener connection ended')));
      listener = c;
      await c.query(`LISTEN ${quoteIdent(channel)}`);
      if (closed || listener !== c) return;
      listening = true;
      backoffMs = minMs;
      const waiters = readyWaiters;
      readyWaiters = [];
      for (const w of waiters) w.resolve();
    } catch (error) {
      if (client !== undefined && listener === client) drop(client, error);
      else {
        logger?.warn('postgres events: cannot listen yet; retrying', { error: describe(error) });
        scheduleReconnect();
      }
    }
  };

  void listen();

  return {
    publish(event) {
      deliver(event);
      if (closed || event.local === true) return;
      if (outgoing.length === 0) setImmediate(send);
      outgoing.push({
        taskId: event.taskId,
        payload: JSON.stringify({ taskId: event.taskId, kind: event.kind, origin }),
      });
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    ready() {
      if (closed) return Promise.reject(new Error('postgres events are closed'));
      if (listening) return Promise.resolve();
      return new Promise<void>((resolve, reject) => readyWaiters.push({ resolve, reject }));
    },
    async close() {
      if (closed) return;
      // What was published before the close still goes out (awaited below, with the rest in flight).
      send();
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      for (const w of readyWaiters) w.reject(new Error('postgres events closed'));
      readyWaiters = [];
      await Promise.all([...inFlight]);
      const client = listener;
      listener = null;
      listening = false;
      if (client !== null) {
        client.removeListener('notification', onNotification);
        await client.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
        client.release();
      }
      if (connection.owned) await connection.pool.end();
    },
  };
}

function isPool(value: unknown): value is Pool {
  return typeof value === 'object' && value !== null && typeof (value as Pool).connect === 'function';
}

function parse(payload: string): (TaskEvent & { readonly origin: unknown }) | null {
  try {
    const value = JSON.parse(payload) as { taskId?: unknown; kind?: unknown; origin?: unknown };
    if (typeof value.taskId === 'string' && typeof value.kind === 'string' && KINDS.has(value.kind as TaskEventKind)) {
      return { taskId: value.taskId, kind: value.kind as TaskEventKind, origin: value.origin };
    }
  } catch {
    // fall through
  }
  return null;
}
