import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Connector } from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import type { LocalState, ToolOperation } from '../executor/operation.js';
import { wrapWireRequests, type WireCall } from '../executor/wrap-wire.js';
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
  /** The operation a request is about: by its submission key before a task id is known. */
  const operationOf = (call: WireCall): string | undefined => {
    switch (call.request) {
      case 'submit':
        return byKey.get(call.args[0].submissionKey);
      case 'lookupKey':
        return byKey.get(call.args[0]);
      case 'logs':
        // A log follower's read, not a step of the operation's wait.
        return undefined;
      default:
        return byTask.get(call.args[0]);
    }
  };
  const poll = (taskId: string, attributes: Attributes): void => {
    spans.get(byTask.get(taskId) ?? '')?.addEvent('poll', attributes);
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
      // The session too: a resumed operation's kept HTTP session reaches the connector.
      return async (server, wire, session) =>
        wrapWireRequests(await inner(server, wire, session), {
          run: (call, send) => {
            const parent = contextOf(operationOf(call));
            return parent === undefined ? send() : context.with(parent, send);
          },
          answered: (done) => {
            if (done.request === 'getStatus') poll(done.args[0], { 'terminus.task.status': done.answer.status });
            // On our servers a status read is a read of the task's events: a poll too.
            if (done.request === 'events' && done.answer.kind === 'page') {
              poll(done.args[0], { 'terminus.task.status': done.answer.status });
            }
          },
          failed: (call, error) => {
            if (call.request !== 'getStatus' && call.request !== 'events') return;
            poll(call.args[0], { 'terminus.poll.failed': error instanceof Error ? error.name : 'error' });
          },
        });
    },
  };
}
