import { context, SpanKind, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Clock, Logger } from '../../src/core/ports.js';
import { systemClock } from '../../src/core/system.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { AsyncContextManager } from '../../src/telemetry/context.js';
import { requestInstrument } from '../../src/telemetry/http.js';
import { combineObservers, type LifecycleEvent, type TaskObserver } from '../../src/runner/observer.js';
import { lifecycleLog } from '../../src/telemetry/log.js';
import { createMetrics, type TerminusMetrics } from '../../src/telemetry/metrics.js';
import { taskSpanContext, taskTracing } from '../../src/telemetry/trace.js';
import {
  BACKENDS,
  aborted,
  closeStores,
  engineFor,
  gate,
  nodeStore,
  OWNER,
  text,
  tool,
  until,
  untilStatus,
} from '../runner/helpers.js';

interface Line {
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** A logger that keeps its `info` entries. */
function capture(): { readonly logger: Logger; readonly lines: Line[] } {
  const lines: Line[] = [];
  const ignore = (): void => {};
  return {
    lines,
    logger: {
      debug: ignore,
      warn: ignore,
      error: ignore,
      info: (message, fields = {}) => lines.push({ message, fields }),
    },
  };
}

/** One node's telemetry, as `terminus serve` wires it: logs, metrics and spans from one feed. */
function node(
  tracer: Tracer,
  payloads = false,
): {
  readonly observer: TaskObserver;
  readonly lines: Line[];
  readonly metrics: TerminusMetrics;
} {
  const { logger, lines } = capture();
  const metrics = createMetrics();
  const observer = combineObservers(lifecycleLog({ logger, payloads }), metrics.observer, taskTracing({ tracer }));
  return { observer, lines, metrics };
}

async function value(metrics: TerminusMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return match?.value ?? 0;
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('test');
const contexts = new AsyncContextManager();
const engines: TaskEngine[] = [];

beforeAll(() => {
  context.setGlobalContextManager(contexts.enable());
});
afterAll(() => {
  context.disable();
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  await closeStores();
  exporter.reset();
});

const sqlite = BACKENDS.find((b) => b.name === 'sqlite')!;

describe('lifecycle telemetry through a crash and a re-run', () => {
  it('logs, counts and traces the creation on node A, the re-claim on node B and the completion', async () => {
    const inner = await sqlite.open();
    const storeA = nodeStore(inner);
    const started = gate();
    const make = (name: string) =>
      tool('job', async (_args, ctx) => {
        if (name === 'node-a') {
          started.open();
          await aborted(ctx.signal); // never: node A dies
        }
        return text(`secret-result by ${name}`);
      });
    const a = node(tracer);
    const engineA = engineFor(storeA, [make('node-a')], { nodeId: 'node-a', observer: a.observer });
    engineA.start();

    // The request that creates the task carries the client's W3C trace context in `_meta`.
    const clientTrace = '0af7651916cd43dd8448eb211c80319c';
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { _meta: { traceparent: `00-${clientTrace}-b7ad6b7169203331-01` } },
    };
    const instrument = requestInstrument({ tracer, metrics: a.metrics });
    let taskId = '';
    await instrument(
      { httpMethod: 'POST', path: '/mcp', headers: {}, body: Buffer.from(JSON.stringify(body)), parsedBody: body },
      async () => {
        ({
          task: { id: taskId },
        } = await engineA.submit({ owner: OWNER, tool: 'job', args: { n: 424242 }, wire: 'mcp-tasks-ext' }));
        return 200;
      },
    );
    // Client-chosen method names and paths never become labels of their own (bounded cardinality).
    const odd = { jsonrpc: '2.0', id: 2, method: 'made/up-4711', params: {} };
    await instrument(
      { httpMethod: 'POST', path: '/mcp', headers: {}, body: Buffer.from(JSON.stringify(odd)), parsedBody: odd },
      async () => 200,
    );
    await instrument(
      { httpMethod: 'GET', path: '/v1/zzz-4711', headers: {}, body: undefined, parsedBody: undefined },
      async () => 404,
    );
    expect(await value(a.metrics, 'terminus_http_requests_total', { method: 'other', wire: 'mcp-tasks-ext' })).toBe(1);
    expect(
      await value(a.metrics, 'terminus_http_requests_total', { method: 'GET /v1/*', wire: 'aip-151', code: '404' }),
    ).toBe(1);
    expect(await a.metrics.registry.metrics()).not.toContain('4711');
    await started.promise;
    storeA.kill(); // node A dies mid-run: it writes nothing more, its run span never ends

    const b = node(tracer, true);
    const engineB = engineFor(inner, [make('node-b')], { nodeId: 'node-b', observer: b.observer });
    engines.push(engineB);
    engineB.start();
    await untilStatus(inner, taskId, (t) => t.status === 'completed', 'completion on node B');
    await until(() => b.lines.some((l) => l.message === 'task completed'), 'the completed line');

    expect(a.lines.map((l) => l.message)).toEqual(['task created', 'task claimed']);
    expect(a.lines[0]?.fields).toEqual({ event: 'created', taskId, tool: 'job', wire: 'mcp-tasks-ext', owner: OWNER });
    expect(a.lines[1]?.fields).toMatchObject({ event: 'claimed', taskId, tool: 'job', node: 'node-a', epoch: 1 });
    // No argument values without --log-payloads.
    expect(JSON.stringify(a.lines)).not.toContain('424242');

    expect(b.lines.map((l) => l.message)).toEqual(['task re-claimed after a lease expired', 'task completed']);
    expect(b.lines[0]?.fields).toEqual({
      event: 'claimed',
      taskId,
      tool: 'job',
      node: 'node-b',
      epoch: 2,
      previousEpoch: 1,
      previousNode: 'node-a',
    });
    expect(b.lines[1]?.fields).toMatchObject({ taskId, node: 'node-b', epoch: 2, outcome: 'completed' });
    // Node B logs payloads: the result is in its line.
    expect(JSON.stringify(b.lines[1]?.fields['result'])).toContain('secret-result by node-b');

    // Counters moved by exactly what each node did.
    expect(await value(a.metrics, 'terminus_tasks_created_total', { tool: 'job', wire: 'mcp-tasks-ext' })).toBe(1);
    expect(await value(a.metrics, 'terminus_task_claims_total', { tool: 'job' })).toBe(1);
    expect(await value(a.metrics, 'terminus_task_reclaims_total', { tool: 'job' })).toBe(0);
    expect(await value(a.metrics, 'terminus_task_lease_expiries_total', { tool: 'job' })).toBe(0);
    expect(await value(a.metrics, 'terminus_tasks_running', { tool: 'job' })).toBe(1);
    expect(
      await value(a.metrics, 'terminus_http_requests_total', {
        method: 'tools/call',
        wire: 'mcp-tasks-ext',
        code: '200',
      }),
    ).toBe(1);
    expect(await value(b.metrics, 'terminus_tasks_created_total')).toBe(0);
    expect(await value(b.metrics, 'terminus_task_claims_total', { tool: 'job' })).toBe(1);
    expect(await value(b.metrics, 'terminus_task_reclaims_total', { tool: 'job' })).toBe(1);
    expect(await value(b.metrics, 'terminus_task_lease_expiries_total', { tool: 'job' })).toBe(1);
    expect(await value(b.metrics, 'terminus_task_outcomes_total', { tool: 'job', status: 'completed' })).toBe(1);
    expect(await value(b.metrics, 'terminus_task_runs_total', { tool: 'job', outcome: 'completed' })).toBe(1);
    expect(await value(b.metrics, 'terminus_tasks_running', { tool: 'job' })).toBe(0);
    expect(await value(b.metrics, 'terminus_task_run_seconds', { tool: 'job', outcome: 'completed' })).toBeGreaterThan(
      0,
    );

    // Spans: the request continues the client's trace; the task and its re-run share the task's trace.
    const spans = exporter.getFinishedSpans();
    const root = taskSpanContext(taskId);
    const request = spans.find((s) => s.name === 'terminus.request');
    expect(request?.spanContext().traceId).toBe(clientTrace);
    expect(request?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(request?.kind).toBe(SpanKind.SERVER);
    const created = spans.find((s) => s.name === 'terminus.task');
    expect(created?.spanContext().traceId).toBe(root.traceId);
    expect(created?.links.map((l) => l.context.spanId)).toEqual([request?.spanContext().spanId]);
    const runs = spans.filter((s) => s.name === 'terminus.task.run');
    // Node A's run never ended (the process died); node B's run is in the same trace under the same root.
    expect(runs.map((s) => s.attributes)).toEqual([
      {
        'terminus.task.id': taskId,
        'terminus.tool': 'job',
        'terminus.node': 'node-b',
        'terminus.epoch': 2,
        'terminus.attempt': 2,
        'terminus.reclaimed': true,
        'terminus.previous_node': 'node-a',
        'terminus.run.outcome': 'completed',
      },
    ]);
    expect(runs[0]?.spanContext().traceId).toBe(root.traceId);
    expect(runs[0]?.parentSpanContext?.spanId).toBe(root.spanId);
    expect(runs[0]?.links.map((l) => l.context.spanId)).toEqual([root.spanId]);
  });

  it('a throwing observer fails no command: the submit that committed still answers, the task still runs', async () => {
    const store = await sqlite.open();
    const seen: string[] = [];
    const observer = {
      observe(event: { kind: string }) {
        seen.push(event.kind);
        if (event.kind !== 'claim_pass') throw new Error('observer bug');
      },
    };
    const engine = engineFor(store, [tool('job', async () => text('ok'))], { observer });
    engines.push(engine);
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'job', args: {}, wire: 'mcp-tasks-ext' });
    await untilStatus(store, task.id, (t) => t.status === 'completed');
    await expect(engine.cancel(OWNER, task.id)).resolves.toMatchObject({ outcome: 'already_terminal' });
    expect(seen).toEqual(expect.arrayContaining(['created', 'claimed', 'run_ended', 'cancel_requested']));
  });

  it('an answer and a won cancel are stamped with the instant the store recorded them (the console timeline orders by it)', async () => {
    const store = await sqlite.open();
    const events: LifecycleEvent[] = [];
    // A clock that moves on every read: a second read of it for the event would show.
    let ms = Date.now();
    const clock: Clock = { now: () => (ms += 7), sleep: (delay, signal) => systemClock.sleep(delay, signal) };
    const asking = tool('ask', async (_args, ctx) => {
      await ctx.requestInput({ type: 'object', properties: {} }, 'go on?');
      await aborted(ctx.signal);
      return text('not reached');
    });
    const engine = engineFor(store, [asking], { clock, observer: { observe: (e) => void events.push(e) } });
    engines.push(engine);
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'ask', args: {}, wire: 'mcp-tasks-ext' });
    const asked = await untilStatus(store, task.id, (t) => t.status === 'input_required');
    const key = Object.keys(asked.inputRequests)[0]!;
    const answeredTask = await engine.respond(OWNER, task.id, { [key]: { action: 'accept', content: {} } });
    const cancelled = await engine.cancel(OWNER, task.id);
    expect(cancelled.outcome).toBe('cancelled');
    expect(events.find((e) => e.kind === 'input_answered')?.at).toBe(answeredTask.updatedAt);
    expect(events.find((e) => e.kind === 'cancel_requested')?.at).toBe(cancelled.task.terminalAt);
  });

  it('logs input requested and answered, and a cancel that wins and one that loses', async () => {
    const store = await sqlite.open();
    const n = node(tracer);
    const asking = tool('ask', async (_args, ctx) => {
      const reply = await ctx.requestInput({ type: 'object', properties: {} }, 'go on?');
      if (reply.action === 'accept') await aborted(ctx.signal);
      ctx.signal.throwIfAborted(); // a handler that honours its signal: the run stops, no late outcome
      return text('not reached');
    });
    const engine = engineFor(store, [asking], { nodeId: 'node-1', observer: n.observer });
    engines.push(engine);
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'ask', args: {}, wire: 'sep-1391' });
    const asked = await untilStatus(store, task.id, (t) => t.status === 'input_required');
    const key = Object.keys(asked.inputRequests)[0]!;
    await engine.respond(OWNER, task.id, { [key]: { action: 'accept', content: {} } });
    await untilStatus(store, task.id, (t) => t.status === 'working');
    await engine.cancel(OWNER, task.id);
    await engine.cancel(OWNER, task.id);
    await until(() => n.lines.some((l) => l.message === 'task run stopped: cancelled'), 'the run to stop');

    expect(n.lines.map((l) => [l.message, l.fields['epoch'] ?? l.fields['outcome'] ?? l.fields['keys']])).toEqual([
      ['task created', undefined],
      ['task claimed', 1],
      ['task input requested', 1],
      ['task input answered', [key]],
      ['task cancel requested: won', 'won'],
      ['task cancel requested: lost', 'lost'],
      ['task run stopped: cancelled', 1],
    ]);
    expect(await value(n.metrics, 'terminus_task_cancels_total', { tool: 'ask', outcome: 'won' })).toBe(1);
    expect(await value(n.metrics, 'terminus_task_cancels_total', { tool: 'ask', outcome: 'lost' })).toBe(1);
    expect(await value(n.metrics, 'terminus_task_outcomes_total', { tool: 'ask', status: 'cancelled' })).toBe(1);
    expect(await value(n.metrics, 'terminus_task_input_requests_total', { tool: 'ask' })).toBe(1);
    expect(await value(n.metrics, 'terminus_task_input_answers_total', { tool: 'ask' })).toBe(1);
    const run = exporter.getFinishedSpans().find((s) => s.name === 'terminus.task.run');
    expect(run?.events.map((e) => e.name)).toEqual(['input requested', 'input answered', 'cancel won', 'cancel lost']);
  });
});
