import { Counter, Gauge, Registry } from 'prom-client';
import type { Connector } from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import { LOCAL_STATES, type LocalState } from '../executor/operation.js';
import type { ClientWire } from '../executor/wire-port.js';
import { wrapWireRequests, type WireRequestName } from '../executor/wrap-wire.js';

/** Metrics of one executor: wrap its ledger and its connector, then pass both to `createExecutor`. */
export interface ExecutorMetrics {
  readonly registry: Registry;
  /** The same ledger, counting receipts and state entries; `/metrics` also counts operations by state through it. */
  ledger(ledger: Ledger): Ledger;
  /** The same connector, counting every wire request by kind and outcome (`status` requests are polls). */
  connect(connect: Connector): Connector;
}

/** Operations counted per state at scrape time; a ledger with more shows this many. */
const STATE_SCAN_LIMIT = 100_000;

/** The `request` label of each counted request; a log read is not counted. */
const REQUESTS: Partial<Record<WireRequestName, string>> = {
  submit: 'submit',
  lookupKey: 'lookup',
  getStatus: 'poll',
  // A status read by the task's events (our servers), and the reads of `executor.events()`.
  events: 'events',
  fetchResult: 'fetch',
  cancel: 'cancel',
  sendInput: 'input',
};

/**
 * Executor metrics as decorators of its two ports, so the executor itself needs no option for them:
 * `terminus_executor_operations{state}` (a gauge read from the ledger at scrape; `UNKNOWN` is the
 * count waiting for reconciliation), `terminus_executor_state_entries_total{state}`,
 * `terminus_executor_receipts_total{status}` and `terminus_executor_requests_total{request,outcome}`
 * (`request="poll"` counts polls).
 * @example
 * const metrics = executorMetrics();
 * const executor = await createExecutor({ ledger: metrics.ledger(ledger), connect: metrics.connect(connect), clock, random, ids });
 */
export function executorMetrics(options: { readonly registry?: Registry } = {}): ExecutorMetrics {
  const registry = options.registry ?? new Registry();
  const registers = [registry];
  const ledgers: Ledger[] = [];
  new Gauge({
    name: 'terminus_executor_operations',
    help: 'Operations in the ledger by local state (UNKNOWN: waiting for reconciliation)',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      for (const state of LOCAL_STATES) {
        let count = 0;
        for (const ledger of ledgers) count += (await ledger.listByState([state], STATE_SCAN_LIMIT)).length;
        this.set({ state }, count);
      }
    },
  });
  const entries = new Counter({
    name: 'terminus_executor_state_entries_total',
    help: 'Operations that entered a local state (seen by this process)',
    labelNames: ['state'],
    registers,
  });
  const receipts = new Counter({
    name: 'terminus_executor_receipts_total',
    help: 'Terminal receipts written (at most one per call node, C1)',
    labelNames: ['status'],
    registers,
  });
  const requests = new Counter({
    name: 'terminus_executor_requests_total',
    help: 'Wire requests by kind (poll = a status read) and outcome (ok, error)',
    labelNames: ['request', 'outcome'],
    registers,
  });

  // The last state seen per operation, so an entry is counted once per change; bounded like a cache.
  const states = new Map<string, LocalState>();
  const saw = (operationId: string, state: LocalState): void => {
    if (states.get(operationId) === state) return;
    states.delete(operationId);
    states.set(operationId, state);
    if (states.size > 10_000) states.delete(states.keys().next().value as string);
    entries.inc({ state });
  };

  return {
    registry,
    ledger(inner) {
      ledgers.push(inner);
      return new Proxy(inner, {
        get(target, property, receiver) {
          const value: unknown = Reflect.get(target, property, receiver);
          if (typeof value !== 'function') return value;
          const method = value as (...args: unknown[]) => unknown;
          if (property === 'create') {
            return async (...args: Parameters<Ledger['create']>) => {
              const outcome = await inner.create(...args);
              if (outcome.created) saw(outcome.operation.id, outcome.operation.state);
              return outcome;
            };
          }
          if (property === 'apply') {
            return async (...args: Parameters<Ledger['apply']>) => {
              const record = await inner.apply(...args);
              saw(record.id, record.state);
              return record;
            };
          }
          if (property === 'acceptTerminal') {
            return async (...args: Parameters<Ledger['acceptTerminal']>) => {
              const outcome = await inner.acceptTerminal(...args);
              if (outcome.accepted) {
                receipts.inc({ status: outcome.receipt.status });
                saw(outcome.operation.id, outcome.operation.state);
              }
              return outcome;
            };
          }
          return method.bind(target);
        },
      });
    },
    connect(inner) {
      // The session too: a resumed operation's kept HTTP session reaches the connector.
      return async (server, wire, session) => countRequests(await inner(server, wire, session), requests);
    },
  };
}

function countRequests(wire: ClientWire, requests: Counter<'request' | 'outcome'>): ClientWire {
  const count = (name: WireRequestName, outcome: 'ok' | 'error'): void => {
    const request = REQUESTS[name];
    if (request !== undefined) requests.inc({ request, outcome });
  };
  return wrapWireRequests(wire, {
    answered: ({ request }) => count(request, 'ok'),
    failed: ({ request }) => count(request, 'error'),
  });
}
