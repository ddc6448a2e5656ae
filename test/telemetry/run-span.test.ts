import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/ports.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { AsyncContextManager } from '../../src/telemetry/context.js';
import { executorTracing } from '../../src/telemetry/executor-trace.js';
import { requestInstrument } from '../../src/telemetry/http.js';
import { combineObservers } from '../../src/runner/observer.js';
import { lifecycleLog } from '../../src/telemetry/log.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { taskTracing } from '../../src/telemetry/trace.js';
import { aborted, engineFor, gate, OWNER, text, tool, until, untilStatus } from '../runner/helpers.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('test');
const engines: TaskEngine[] = [];

beforeAll(() => {
  context.setGlobalContextManager(new AsyncContextManager().enable());
});
afterAll(() => {
  context.disable();
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  exporter.reset();
});

function infoLines(): { logger: Logger; lines: { message: string; fields: Record<string, unknown> }[] } {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const ignore = (): void => {};
  return {
    lines,
    logger: { debug: ignore, warn: ignore, error: ignore, info: (m, f = {}) => lines.push({ message: m, fields: f }) },
  };
}

describe('handler code inside its run span', () => {
  it('spans a handler makes, before and after an await, are children of terminus.task.run', async () => {
    const store = createMemoryTaskStore();
    const job = tool('job', async () => {
      tracer.startSpan('handler.before').end();
      await new Promise((r) => setImmediate(r));
      await tracer.startActiveSpan('handler.after', async (span) => {
        tracer.startSpan('handler.nested').end();
        span.end();
      });
      return text('ok');
    });
    const engine = engineFor(store, [job], { nodeId: 'node-a', observer: taskTracing({ tracer }) });
    engines.push(engine);
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'job', args: {}, wire: 'mcp-tasks-ext' });
    await untilStatus(store, task.id, (t) => t.status === 'completed', 'completion');
    await until(() => exporter.getFinishedSpans().some((s) => s.name === 'terminus.task.run'), 'the run span');
    const spans = exporter.getFinishedSpans();
    const run = spans.find((s) => s.name === 'terminus.task.run')!;
    const byName = (name: string) => spans.find((s) => s.name === name);
    expect(byName('handler.before')?.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(byName('handler.after')?.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(byName('handler.nested')?.parentSpanContext?.spanId).toBe(byName('handler.after')?.spanContext().spanId);
    expect(byName('handler.before')?.spanContext().traceId).toBe(run.spanContext().traceId);
    // Outside the handler nothing is left active.
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it('a re-claim after a release (shutdown) names no previous node: nobody held the lease', async () => {
    const store = createMemoryTaskStore();
    const started = gate();
    const job = tool('job', async (_args, ctx) => {
      if (ctx.epoch === 1) {
        started.open();
        await aborted(ctx.signal);
        throw ctx.signal.reason;
      }
      return text('ok');
    });
    const a = infoLines();
    const engineA = engineFor(store, [job], { nodeId: 'node-a', observer: lifecycleLog({ logger: a.logger }) });
    engineA.start();
    const { task } = await engineA.submit({ owner: OWNER, tool: 'job', args: {}, wire: 'mcp-tasks-ext' });
    await started.promise;
    await engineA.stop(); // releases the lease: the task is claimable at once, with no owner
    const b = infoLines();
    const spansB = taskTracing({ tracer });
    const engineB = engineFor(store, [job], {
      nodeId: 'node-b',
      observer: combineObservers(lifecycleLog({ logger: b.logger }), spansB),
    });
    engines.push(engineB);
    engineB.start();
    await untilStatus(store, task.id, (t) => t.status === 'completed', 'completion on node B');
    expect(b.lines[0]).toEqual({
      message: 'task re-claimed after a release',
      fields: { event: 'claimed', taskId: task.id, tool: 'job', node: 'node-b', epoch: 2, previousEpoch: 1 },
    });
    await until(() => exporter.getFinishedSpans().some((s) => s.name === 'terminus.task.run'), 'the run span');
    const run = exporter.getFinishedSpans().find((s) => s.name === 'terminus.task.run');
    expect(run?.attributes['terminus.reclaimed']).toBe(true);
    expect(run?.attributes).not.toHaveProperty('terminus.previous_node');
  });
});

describe('the executor span of an operation’s wait', () => {
  it('spans submit to receipt under the caller’s span, polls as events, the server’s requests as its children', async () => {
    const store = createMemoryTaskStore();
    const release = gate();
    const slow = tool(
      'slow',
      async () => {
        await release.promise;
        return text('slow done');
      },
      { pollIntervalMs: 50, taskSupport: 'required' },
    );
    const engine = createEngineOn(store, slow);
    const serverMetrics = createMetrics();
    const wires = createWireRegistry({ disabled: [] }).adapters;
    const http = await createTerminusServer({ engine, wires }).serveHttp({
      port: 0,
      instrument: requestInstrument({ tracer, metrics: serverMetrics }),
    });
    const tracing = executorTracing({ tracer });
    const executor = await createExecutor({
      ledger: tracing.ledger(createMemoryLedger()),
      connect: tracing.connect(() =>
        connectServer({ url: http.url }, { clock: systemClock, wire: 'mcp-tasks-ext', timeoutMs: 10_000 }),
      ),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      qps: 200,
      policy: { minPollIntervalMs: 50, backoffBaseMs: 50 },
    });
    try {
      const polls = async () =>
        (await serverMetrics.registry.getSingleMetric('terminus_http_requests_total')?.get())?.values
          // Status reads: `tasks/get`, or on our server the task's events.
          .filter((v) => ['tasks/get', 'terminus/tasks/events'].includes(String(v.labels['method'])))
          .reduce((sum, v) => sum + v.value, 0) ?? 0;
      const caller = await tracer.startActiveSpan('agent.call', async (span) => {
        const handle = await executor.submit({ callNodeId: 'node-1', server: 'test', tool: 'slow', args: {} });
        // Two status reads answered `working` before the task may finish: the span must show them.
        await until(async () => (await polls()) >= 2, 'two polls');
        release.open();
        expect((await handle.result()).status).toBe('completed');
        span.end();
        return span.spanContext();
      });
      const spans = exporter.getFinishedSpans();
      const operation = spans.find((s) => s.name === 'terminus.operation');
      expect(operation?.parentSpanContext?.spanId).toBe(caller.spanId);
      expect(operation?.spanContext().traceId).toBe(caller.traceId);
      expect(operation?.attributes).toMatchObject({
        'terminus.tool': 'slow',
        'terminus.wire': 'mcp-tasks-ext',
        'terminus.operation.state': 'ACCEPTED',
        'terminus.receipt.status': 'completed',
        'terminus.operation.resumed': false,
      });
      const names = operation?.events.map((e) => e.name) ?? [];
      expect(names[0]).toBe('state SUBMITTING');
      expect(names.at(-1)).toBe('state ACCEPTED');
      const pollEvents = operation?.events.filter((e) => e.name === 'poll') ?? [];
      expect(pollEvents.length).toBeGreaterThanOrEqual(2);
      expect(pollEvents[0]?.attributes).toEqual({ 'terminus.task.status': 'working' });
      // The server's spans for this operation's requests are children of the operation span.
      const served = spans.filter((s) => s.name === 'terminus.request');
      const submit = served.find((s) => s.attributes['rpc.method'] === 'tools/call');
      expect(submit?.parentSpanContext?.spanId).toBe(operation?.spanContext().spanId);
      // Status reads: `tasks/get`, or on our server the task's events.
      const gets = served.filter((s) =>
        ['tasks/get', 'terminus/tasks/events'].includes(String(s.attributes['rpc.method'])),
      );
      expect(gets.length).toBeGreaterThanOrEqual(2);
      for (const get of gets) expect(get.parentSpanContext?.spanId).toBe(operation?.spanContext().spanId);
    } finally {
      release.open();
      await executor.close();
      await http.close();
    }
  });
});

function createEngineOn(store: ReturnType<typeof createMemoryTaskStore>, slow: ReturnType<typeof tool>): TaskEngine {
  const engine = engineFor(store, [slow], { claimIntervalMs: 20 });
  engines.push(engine);
  engine.start();
  return engine;
}
