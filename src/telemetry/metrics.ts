import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LifecycleEvent, TaskObserver } from './lifecycle.js';

/** The metrics of one server node, on one prom-client registry (see the README's table). */
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
    help: 'Claims at epoch > 1: the previous claim let its lease expire (its node died or stalled)',
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

  const observe = (event: LifecycleEvent): void => {
    switch (event.kind) {
      case 'created':
        created.inc({ tool: event.tool, wire: event.wire });
        return;
      case 'claimed':
        claims.inc({ tool: event.tool });
        running.inc({ tool: event.tool });
        if (event.epoch > 1) reclaims.inc({ tool: event.tool });
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
      inFlight.inc({ ...labels });
      let done = false;
      return () => {
        if (done) return;
        done = true;
        inFlight.dec({ ...labels });
      };
    },
    storeCall(operation, seconds, ok) {
      storeSeconds.observe({ operation, ok: String(ok) }, seconds);
    },
  };
}
