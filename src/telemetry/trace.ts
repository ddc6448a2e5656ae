import { createHash } from 'node:crypto';
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { TaskObserver } from '../runner/observer.js';

/** The instrumentation scope of every span mcp-terminus makes. */
export const TRACER_NAME = 'mcp-terminus';

/**
 * The span context every span of one task descends from: trace id and span id are derived from
 * the task id (sha256), so any process that runs the task, before or after a crash, puts its run
 * in the same trace without the store keeping a trace id. The root itself is never exported: it is
 * a remote parent, as if the task's trace had begun in another service.
 * @example
 * // A span of your own in the task's trace (the same trace id on every node, run and restart):
 * const parent = trace.setSpanContext(ROOT_CONTEXT, taskSpanContext(taskId));
 * const span = tracer.startSpan('report.render', {}, parent);
 */
export function taskSpanContext(taskId: string): SpanContext {
  const hex = createHash('sha256').update(`mcp-terminus task ${taskId}`).digest('hex');
  return { traceId: hex.slice(0, 32), spanId: hex.slice(32, 48), traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

function taskContext(taskId: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, taskSpanContext(taskId));
}

/**
 * Task spans from lifecycle events (a no-op unless an OpenTelemetry SDK is registered):
 * - `terminus.task` when a task is created, in the task's trace, linked to the request that created
 *   it (the active span then);
 * - `terminus.task.run` for each handler run, from its claim to its end, with the attempt, epoch
 *   and node, in the same trace: a re-run after a crash is a sibling of the run that died;
 * - input, answer and cancel as span events on the run of this node, and a `terminus.task.cancel`
 *   span (linked to the request) for the cancel itself.
 * @example
 * const engine = createEngine({ store, tools, clock, ids, observer: taskTracing() });
 * // or with a tracer of your own:
 * const observer = taskTracing({ tracer: trace.getTracer('my-service') });
 */
export function taskTracing(options: { readonly tracer?: Tracer } = {}): TaskObserver {
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  const runs = new Map<string, Span>();
  const linkToActive = (): { context: SpanContext }[] => {
    const active = trace.getSpanContext(context.active());
    return active === undefined ? [] : [{ context: active }];
  };
  const runOf = (taskId: string): Span | undefined => {
    for (const [key, span] of runs) if (key.startsWith(`${taskId}:`)) return span;
    return undefined;
  };
  return {
    within(run, fn) {
      const span = runs.get(`${run.taskId}:${run.epoch}`);
      return span === undefined ? fn() : context.with(trace.setSpan(context.active(), span), fn);
    },
    observe(event) {
      switch (event.kind) {
        case 'created': {
          const attributes = {
            'terminus.task.id': event.taskId,
            'terminus.tool': event.tool,
            'terminus.wire': event.wire,
          };
          const span = tracer.startSpan(
            'terminus.task',
            { kind: SpanKind.INTERNAL, startTime: event.at, attributes, links: linkToActive() },
            taskContext(event.taskId),
          );
          span.end(event.at);
          return;
        }
        case 'claimed': {
          const attributes = {
            'terminus.task.id': event.taskId,
            'terminus.tool': event.tool,
            'terminus.node': event.node,
            'terminus.epoch': event.epoch,
            'terminus.attempt': event.epoch,
            'terminus.reclaimed': event.epoch > 1,
            ...(event.previousNode === null ? {} : { 'terminus.previous_node': event.previousNode }),
          };
          const span = tracer.startSpan(
            'terminus.task.run',
            {
              kind: SpanKind.CONSUMER,
              startTime: event.at,
              attributes,
              links: [{ context: taskSpanContext(event.taskId) }],
            },
            taskContext(event.taskId),
          );
          runs.set(`${event.taskId}:${event.epoch}`, span);
          return;
        }
        case 'input_requested':
          runs
            .get(`${event.taskId}:${event.epoch}`)
            ?.addEvent('input requested', { 'terminus.input.key': event.key }, event.at);
          return;
        case 'input_answered':
          runOf(event.taskId)?.addEvent('input answered', { 'terminus.input.keys': [...event.keys] }, event.at);
          return;
        case 'cancel_requested': {
          runOf(event.taskId)?.addEvent(`cancel ${event.outcome}`, {}, event.at);
          const span = tracer.startSpan('terminus.task.cancel', {
            startTime: event.at,
            attributes: { 'terminus.task.id': event.taskId, 'terminus.cancel.outcome': event.outcome },
            links: [{ context: taskSpanContext(event.taskId) }],
          });
          span.end(event.at);
          return;
        }
        case 'run_ended': {
          const key = `${event.taskId}:${event.epoch}`;
          const span = runs.get(key);
          if (span === undefined) return;
          runs.delete(key);
          span.setAttribute('terminus.run.outcome', event.outcome);
          if (event.outcome === 'failed') {
            span.setStatus({ code: SpanStatusCode.ERROR, message: `error ${event.error?.code ?? ''}`.trim() });
          }
          span.end(event.at);
          return;
        }
        case 'claim_pass':
        case 'log_dropped':
        case 'expired':
          return;
      }
    },
  };
}
