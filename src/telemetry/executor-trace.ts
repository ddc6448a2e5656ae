import { context, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { Connector } from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import type { LocalState, ToolOperation } from '../executor/operation.js';
import type { ClientWire, EventsRequest } from '../executor/wire-port.js';
import { TRACER_NAME } from './trace.js';

/** Spans of one executor's waits: wrap its ledger and its connector, then pass both to `createExecutor`. */
export interface ExecutorTracing {
  /** The same ledger; an operation's span starts at its creation and ends at its outcome. */
  ledger(ledger: Ledger): Ledger;
  /** The same connector; every request of an operation runs inside its span (polls are events). */
  connect(connect: Connector): Connector;
}

/**
 * States that end the wait: a receipt, a proof of never-created, or one an operator must settle
 * (UNKNOWN, EFFECT_RECONCILIATION_REQUIRED: the span ends in error; a later reconciliation is not in it).
 */
const ENDS: ReadonlySet<LocalState> = new Set([
  'ACCEPTED',
  'CANCELLED_ACCEPTED',
  'NEVER_CREATED',
  'EXPIRED_WITH_RECEIPT',
  'UNKNOWN',
  'EFFECT_RECONCILIATION_REQUIRED',
]);
const IN_DOUBT: ReadonlySet<LocalState> = new Set(['UNKNOWN', 'EFFECT_RECONCILIATION_REQUIRED']);

/** Open spans kept at most; the oldest is ended (`terminus.operation.abandoned`) past it. */
const OPEN_LIMIT = 10_000;

/**
 * A `terminus.operation` span (CLIENT) per operation, from its creation in the ledger to the state
 * that ends its wait, as decorators of the executor's two ports (like `executorMetrics`), so the
 * executor needs no option. Its parent is the context active when the call was submitted (the
 * caller's span); each state change is an event (`state WORKING`, ...) and each status read a
 * `poll` event with the status answered. Every wire request of the operation runs inside the span,
 * so the trace context the adapters send makes the server's request spans its children. An
 * operation resumed by another process gets a span of its own from its first step there
 * (`terminus.operation.resumed`). A no-op unless an OpenTelemetry SDK is registered.
 * @example
 * const tracing = executorTracing();
 * const executor = await createExecutor({ ledger: tracing.ledger(ledger), connect: tracing.connect(connect), clock, random, ids });
 */
export function executorTracing(options: { readonly tracer?: Tracer } = {}): ExecutorTracing {
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  const spans = new Map<string, Span>(); // by operation id
  const byKey = new Map<string, string>(); // submission key -> operation id
  const byTask = new Map<string, string>(); // server task id -> operation id
  const states = new Map<string, LocalState>();

  const forget = (operationId: string): void => {
    spans.delete(operationId);
    states.delete(operationId);
    for (const index of [byKey, byTask]) {
      for (const [key, id] of index) if (id === operationId) index.delete(key);
    }
  };
  const open = (record: ToolOperation, resumed: boolean): Span => {
    const span = tracer.startSpan('terminus.operation', {
      kind: SpanKind.CLIENT,
      attributes: {
        'terminus.operation.id': record.id,
        'terminus.call_node': record.callNodeId,
        'terminus.tool': record.tool.name,
        'terminus.wire': record.wire.name,
        'terminus.operation.resumed': resumed,
      },
    });
    spans.set(record.id, span);
    if (spans.size > OPEN_LIMIT) {
      const [oldest, stale] = spans.entries().next().value as [string, Span];
      stale.setAttribute('terminus.operation.abandoned', true);
      stale.end();
      forget(oldest);
    }
    return span;
  };
  const saw = (record: ToolOperation): void => {
    const span = spans.get(record.id) ?? open(record, true);
    byKey.set(record.submissionKey, record.id);
    if (record.taskId !== null) {
      if (!byTask.has(record.taskId)) span.setAttribute('terminus.task.id', record.taskId);
      byTask.set(record.taskId, record.id);
    }
    if (states.get(record.id) === record.state) return;
    states.set(record.id, record.state);
    span.addEvent(`state ${record.state}`);
    if (!ENDS.has(record.state)) return;
    span.setAttribute('terminus.operation.state', record.state);
    if (IN_DOUBT.has(record.state)) span.setStatus({ code: SpanStatusCode.ERROR, message: record.state });
    span.end();
    forget(record.id);
  };
  const contextOf = (operationId: string | undefined): Context | undefined => {
    const span = operationId === undefined ? undefined : spans.get(operationId);
    return span === undefined ? undefined : trace.setSpan(context.active(), span);
  };

  return {
    ledger(inner) {
      return new Proxy(inner, {
        get(target, property, receiver) {
          const value: unknown = Reflect.get(target, property, receiver);
          if (typeof value !== 'function') return value;
          if (property === 'create') {
            return async (...args: Parameters<Ledger['create']>) => {
              const outcome = await inner.create(...args);
              if (outcome.created) {
                open(outcome.operation, false);
                saw(outcome.operation);
              }
              return outcome;
            };
          }
          if (property === 'apply') {
            return async (...args: Parameters<Ledger['apply']>) => {
              const record = await inner.apply(...args);
              saw(record);
              return record;
            };
          }
          if (property === 'acceptTerminal') {
            return async (...args: Parameters<Ledger['acceptTerminal']>) => {
              const outcome = await inner.acceptTerminal(...args);
              if (outcome.accepted) {
                spans.get(outcome.operation.id)?.setAttribute('terminus.receipt.status', outcome.receipt.status);
                saw(outcome.operation);
              }
              return outcome;
            };
          }
          return (value as (...a: unknown[]) => unknown).bind(target);
        },
      });
    },
    connect(inner) {
      return async (server, wire, session) => {
        // The session too: a resumed operation's kept HTTP session reaches the connector.
        const client = await inner(server, wire, session);
        const inside =
          <A extends unknown[], R>(find: (...args: A) => string | undefined, call: (...args: A) => Promise<R>) =>
          (...args: A): Promise<R> => {
            const parent = contextOf(find(...args));
            return parent === undefined ? call(...args) : context.with(parent, () => call(...args));
          };
        const task = (taskId: string): string | undefined => byTask.get(taskId);
        const traced: Partial<ClientWire> = {
          submit: inside((request) => byKey.get(request.submissionKey), client.submit.bind(client)),
          lookupKey: inside((key) => byKey.get(key), client.lookupKey.bind(client)),
          getStatus: inside(task, async (taskId: string, signal?: AbortSignal) => {
            const span = spans.get(task(taskId) ?? '');
            try {
              const snapshot = await client.getStatus(taskId, signal);
              span?.addEvent('poll', { 'terminus.task.status': snapshot.status });
              return snapshot;
            } catch (error) {
              span?.addEvent('poll', { 'terminus.poll.failed': error instanceof Error ? error.name : 'error' });
              throw error;
            }
          }),
          // On our servers a status read is a read of the task's events: a poll too.
          ...(client.events === undefined
            ? {}
            : {
                events: inside(
                  (taskId: string, _request: EventsRequest, _signal?: AbortSignal) => task(taskId),
                  async (taskId: string, request: EventsRequest, signal?: AbortSignal) => {
                    const span = spans.get(task(taskId) ?? '');
                    try {
                      const answer = await client.events!(taskId, request, signal);
                      if (answer.kind === 'page') span?.addEvent('poll', { 'terminus.task.status': answer.status });
                      return answer;
                    } catch (error) {
                      span?.addEvent('poll', { 'terminus.poll.failed': error instanceof Error ? error.name : 'error' });
                      throw error;
                    }
                  },
                ),
              }),
          fetchResult: inside(task, client.fetchResult.bind(client)),
          cancel: inside(task, client.cancel.bind(client)),
          sendInput: inside(
            (taskId: string, _responses: Readonly<Record<string, unknown>>, _signal?: AbortSignal) => task(taskId),
            client.sendInput.bind(client),
          ),
        };
        // A Proxy, not a spread: the adapter's other members (onClose, getters) stay as they are.
        return new Proxy(client, {
          get(target, property, receiver) {
            const own = (traced as Record<string | symbol, unknown>)[property];
            if (own !== undefined) return own;
            const value: unknown = Reflect.get(target, property, receiver);
            // Bound: an adapter with private fields fails when called with the proxy as `this`.
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
      };
    },
  };
}
