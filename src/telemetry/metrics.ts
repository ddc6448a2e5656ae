import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LifecycleEvent, TaskObserver } from '../runner/observer.js';

/** The metrics of one server node, on one prom-client registry (listed in docs/operations.md, "Metrics"). */
export interface TerminusMetrics {
  readonly registry: Registry;
  /** Feeds the task metrics; pass it to `createEngine({ observer })`. */
  readonly observer: TaskObserver;
  /** Records one answered HTTP request (`rpcMethod` is the JSON-RPC method, or the HTTP route). */
  request(labels: RequestLabels, seconds: number): void;
  /** Counts a request in flight until the returned function is called (open listen streams show here). */
  inFlight(labels: Omit<RequestLabels, 'code'>): () => void;
  /** Records one store call's latency. */
  storeCall(operation: string, seconds: number, ok: boolean): void;
  /** Records one store commit: the writes it carried (group commit) and its time. */
  commit(report: { readonly writes: number; readonly seconds: number; readonly ok: boolean }): void;
  /** Counts task events a write dropped past the per-task bound (the store's `onEventsDropped`). */
  eventsDropped(count: number): void;
  /** Reads the open 2025-era HTTP sessions at each scrape (`HttpServerHandle.openSessions`). */
  countSessions(read: () => number): void;
}

/** The labels of one answered request: JSON-RPC method or route, wire, HTTP status. */
export interface RequestLabels {
  readonly method: string;
  readonly wire: string;
  readonly code: string;
}

// Buckets in seconds. Runs go from sub-second demo calls to hours (the TTL default is 1 h).
const RUN_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600, 14_400];
// The claim interval is 250 ms, so an idle node's queue wait is mostly under it.
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600];
// A SQLite commit with synchronous=FULL is ~1-5 ms on an SSD; PostgreSQL adds a round trip.
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2];
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];
// Group commit takes up to 512 writes per transaction (the SQLite store's default maxBatch).
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/** Requests that hold a listen stream open: the 2026 `subscriptions/listen`, the 2025 GET stream. */
const LISTEN_METHODS: ReadonlySet<string> = new Set(['subscriptions/listen', 'GET /mcp']);

/**
 * Creates the Prometheus metrics of a node. Every name starts with `terminus_`; labels carry tool
 * names, wires, methods, codes and outcomes, never an owner or a task id (unbounded cardinality).
 * @example
 * const metrics = createMetrics();
 * const engine = createEngine({ store, tools, clock, ids, observer: metrics.observer });
 * // GET /metrics: await metrics.registry.metrics()
 */
export function createMetrics(options: { readonly registry?: Registry } = {}): TerminusMetrics {
  const registry = options.registry ?? new Registry();
  const registers = [registry];
  const created = new Counter({
    name: 'terminus_tasks_created_total',
    help: 'Tasks created, by tool and wire',
    labelNames: ['tool', 'wire'],
    registers,
  });
  const outcomes = new Counter({
    name: 'terminus_task_outcomes_total',
    help: 'Tasks that reached a terminal status on this node (completed, failed, cancelled)',
    labelNames: ['tool', 'status'],
    registers,
  });
  const runs = new Counter({
    name: 'terminus_task_runs_total',
    help: 'Handler runs ended, by outcome (completed, failed, late, cancelled, shutdown, lease_lost)',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const claims = new Counter({
    name: 'terminus_task_claims_total',
    help: 'Claims of a task by this node (epoch 1 and re-claims)',
    labelNames: ['tool'],
    registers,
  });
  const reclaims = new Counter({
    name: 'terminus_task_reclaims_total',
    help: 'Claims at epoch > 1: the previous claim let its lease expire or released it at a shutdown',
    labelNames: ['tool'],
    registers,
  });
  const leaseExpiries = new Counter({
    name: 'terminus_task_lease_expiries_total',
    help: 'Claims here that took over an expired lease of another claim (its node died or stalled)',
    labelNames: ['tool'],
    registers,
  });
  const leaseLost = new Counter({
    name: 'terminus_task_lease_lost_total',
    help: 'Runs on this node that lost their lease before writing an outcome',
    labelNames: ['tool'],
    registers,
  });
  const running = new Gauge({
    name: 'terminus_tasks_running',
    help: 'Handlers running on this node',
    labelNames: ['tool'],
    registers,
  });
  const inputs = new Counter({
    name: 'terminus_task_input_requests_total',
    help: 'Input requests issued by handlers',
    labelNames: ['tool'],
    registers,
  });
  const answers = new Counter({
    name: 'terminus_task_input_answers_total',
    help: 'Input responses received',
    labelNames: ['tool'],
    registers,
  });
  const cancels = new Counter({
    name: 'terminus_task_cancels_total',
    help: 'Cancel requests, by outcome (won: the task is cancelled; lost: it was already terminal)',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const logDropped = new Counter({
    name: 'terminus_task_log_lines_dropped_total',
    help: 'Task log lines a handler wrote faster than the store took them, dropped (oldest first) before storing',
    labelNames: ['tool'],
    registers,
  });
  const eventsDropped = new Counter({
    name: 'terminus_task_events_dropped_total',
    help: 'Task progress and log events deleted (oldest first) past the per-task bound (--max-task-events)',
    registers,
  });
  const expired = new Counter({
    name: 'terminus_tasks_expired_total',
    help: 'Expired tasks deleted by the TTL sweep',
    registers,
  });
  const runSeconds = new Histogram({
    name: 'terminus_task_run_seconds',
    help: 'Time of one handler run (one epoch), by outcome',
    labelNames: ['tool', 'outcome'],
    buckets: RUN_BUCKETS,
    registers,
  });
  const queueWait = new Histogram({
    name: 'terminus_task_queue_wait_seconds',
    help: 'Time from creation to the first claim',
    labelNames: ['tool'],
    buckets: WAIT_BUCKETS,
    registers,
  });
  const claimSeconds = new Histogram({
    name: 'terminus_claim_duration_seconds',
    help: 'Time of one claim query (measured on the engine clock: whole milliseconds)',
    buckets: STORE_BUCKETS,
    registers,
  });
  const claimFailures = new Counter({
    name: 'terminus_claim_failures_total',
    help: 'Claim queries that failed (store unreachable, ...)',
    registers,
  });
  const requests = new Counter({
    name: 'terminus_http_requests_total',
    help: 'HTTP requests answered, by JSON-RPC method (or route), wire and HTTP status',
    labelNames: ['method', 'wire', 'code'],
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'terminus_http_request_duration_seconds',
    help: 'Time to answer a request (to the end of its body: a listen stream counts while it is open)',
    labelNames: ['method', 'wire', 'code'],
    buckets: HTTP_BUCKETS,
    registers,
  });
  const inFlight = new Gauge({
    name: 'terminus_http_requests_in_flight',
    help: 'Requests being answered now; open listen streams (tasks/listen, GET /mcp) stay here while open',
    labelNames: ['method', 'wire'],
    registers,
  });
  const storeSeconds = new Histogram({
    name: 'terminus_store_operation_seconds',
    help: 'Latency of a task store call (each write resolves after its durable commit)',
    labelNames: ['operation', 'ok'],
    buckets: STORE_BUCKETS,
    registers,
  });

  const commitWrites = new Histogram({
    name: 'terminus_store_commit_batch_size',
    help: 'Writes per store transaction (SQLite group commit: all writes queued in one event-loop turn, up to 512)',
    labelNames: ['ok'],
    buckets: BATCH_BUCKETS,
    registers,
  });
  const commitSeconds = new Histogram({
    name: 'terminus_store_commit_seconds',
    help: 'Time of one store transaction, BEGIN to durable COMMIT (SQLite group commit)',
    labelNames: ['ok'],
    buckets: STORE_BUCKETS,
    registers,
  });
  const listenStreams = new Gauge({
    name: 'terminus_listen_streams',
    help: 'Open listen streams: subscriptions/listen (2026-07-28) and GET /mcp notification streams (2025-11-25)',
    labelNames: ['wire'],
    registers,
  });
  const sessionReaders: (() => number)[] = [];
  new Gauge({
    name: 'terminus_sessions',
    help: 'Open 2025-era HTTP sessions (Mcp-Session-Id), read at scrape',
    registers,
    collect() {
      this.set(sessionReaders.reduce((sum, read) => sum + read(), 0));
    },
  });

  const observe = (event: LifecycleEvent): void => {
    switch (event.kind) {
      case 'created':
        created.inc({ tool: event.tool, wire: event.wire });
        return;
      case 'claimed':
        claims.inc({ tool: event.tool });
        running.inc({ tool: event.tool });
        if (event.epoch > 1) reclaims.inc({ tool: event.tool });
        if (event.previousNode !== null) leaseExpiries.inc({ tool: event.tool });
        else queueWait.observe({ tool: event.tool }, Math.max(0, event.at - event.createdAt) / 1000);
        return;
      case 'claim_pass':
        if (!event.ok) claimFailures.inc();
        else if (event.queried) claimSeconds.observe(event.durationMs / 1000);
        return;
      case 'input_requested':
        inputs.inc({ tool: event.tool });
        return;
      case 'input_answered':
        answers.inc({ tool: event.tool });
        return;
      case 'cancel_requested':
        cancels.inc({ tool: event.tool, outcome: event.outcome });
        if (event.outcome === 'won') outcomes.inc({ tool: event.tool, status: 'cancelled' });
        return;
      case 'run_ended':
        running.dec({ tool: event.tool });
        runs.inc({ tool: event.tool, outcome: event.outcome });
        runSeconds.observe({ tool: event.tool, outcome: event.outcome }, event.runMs / 1000);
        if (event.outcome === 'completed' || event.outcome === 'failed') {
          outcomes.inc({ tool: event.tool, status: event.outcome });
        }
        if (event.outcome === 'lease_lost') leaseLost.inc({ tool: event.tool });
        return;
      case 'log_dropped':
        logDropped.inc({ tool: event.tool }, event.count);
        return;
      case 'expired':
        expired.inc(event.count);
        return;
    }
  };

  return {
    registry,
    observer: { observe },
    request(labels, seconds) {
      requests.inc({ ...labels });
      requestSeconds.observe({ ...labels }, seconds);
    },
    inFlight(labels) {
      const listen = LISTEN_METHODS.has(labels.method);
      inFlight.inc({ ...labels });
      if (listen) listenStreams.inc({ wire: labels.wire });
      let done = false;
      return () => {
        if (done) return;
        done = true;
        inFlight.dec({ ...labels });
        if (listen) listenStreams.dec({ wire: labels.wire });
      };
    },
    commit(report) {
      const ok = String(report.ok);
      commitWrites.observe({ ok }, report.writes);
      commitSeconds.observe({ ok }, report.seconds);
    },
    eventsDropped(count) {
      if (count > 0) eventsDropped.inc(count);
    },
    countSessions(read) {
      sessionReaders.push(read);
    },
    storeCall(operation, seconds, ok) {
      storeSeconds.observe({ operation, ok: String(ok) }, seconds);
    },
  };
}
