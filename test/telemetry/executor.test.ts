import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { createEngine } from '../../src/runner/engine.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { AsyncContextManager } from '../../src/telemetry/context.js';
import { executorMetrics } from '../../src/telemetry/executor.js';
import { requestInstrument } from '../../src/telemetry/http.js';
import { text, tool } from '../runner/helpers.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('test');

beforeAll(() => {
  context.setGlobalContextManager(new AsyncContextManager().enable());
});
afterAll(() => {
  context.disable();
});

async function value(registry: import('prom-client').Registry, name: string, labels: Record<string, string>) {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
}

const WIRES = [
  { wire: 'mcp-tasks-ext', create: 'tools/call', carrier: '_meta' },
  { wire: 'mcp-2025-11-25', create: 'tools/call', carrier: 'traceparent header' },
  { wire: 'aip-151', create: 'POST /v1/tools', carrier: 'traceparent header' },
] as const;

describe.each(WIRES)('executor metrics and trace context to the server ($wire)', ({ wire, create, carrier }) => {
  it(`counts requests, polls, receipts and operations by state; the server request continues the caller’s trace (${carrier})`, async () => {
    exporter.reset();
    const store = createMemoryTaskStore();
    const quick = tool('quick', async () => text('quick done'), { pollIntervalMs: 50, taskSupport: 'required' });
    const engine = createEngine({ store, tools: [quick], clock: systemClock, ids: systemIds, claimIntervalMs: 20 });
    engine.start();
    const wires = createWireRegistry({ disabled: [] }).adapters;
    const http = await createTerminusServer({ engine, wires }).serveHttp({
      port: 0,
      instrument: requestInstrument({ tracer }),
    });
    const metrics = executorMetrics();
    const executor = await createExecutor({
      ledger: metrics.ledger(createMemoryLedger()),
      connect: metrics.connect(() => connectServer({ url: http.url }, { clock: systemClock, wire, timeoutMs: 10_000 })),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      qps: 200,
      policy: { minPollIntervalMs: 50, backoffBaseMs: 50 },
    });
    try {
      const { receipt, caller } = await tracer.startActiveSpan('agent.call', async (span) => {
        const handle = await executor.submit({ callNodeId: 'node-1', server: 'test', tool: 'quick', args: {} });
        const done = await handle.result();
        span.end();
        return { receipt: done, caller: span.spanContext() };
      });
      expect(receipt.status).toBe('completed');

      const { registry } = metrics;
      expect(await value(registry, 'terminus_executor_receipts_total', { status: 'completed' })).toBe(1);
      expect(await value(registry, 'terminus_executor_requests_total', { request: 'submit', outcome: 'ok' })).toBe(1);
      expect(
        await value(registry, 'terminus_executor_requests_total', { request: 'fetch', outcome: 'ok' }),
      ).toBeGreaterThanOrEqual(1);
      expect(await value(registry, 'terminus_executor_operations', { state: 'ACCEPTED' })).toBe(1);
      expect(await value(registry, 'terminus_executor_operations', { state: 'UNKNOWN' })).toBe(0);
      expect(await value(registry, 'terminus_executor_state_entries_total', { state: 'ACCEPTED' })).toBe(1);
      expect(await value(registry, 'terminus_executor_state_entries_total', { state: 'SUBMITTING' })).toBe(1);

      // The caller's span went with the request: the server's span for the creating request is its child.
      const call = exporter
        .getFinishedSpans()
        .find((s) => s.name === 'terminus.request' && s.attributes['rpc.method'] === create);
      expect(call?.attributes['terminus.wire']).toBe(wire);
      expect(call?.spanContext().traceId).toBe(caller.traceId);
      expect(call?.parentSpanContext?.spanId).toBe(caller.spanId);
      expect(trace.getSpanContext(context.active())).toBeUndefined();
    } finally {
      await executor.close();
      await http.close();
      await engine.stop();
    }
  });
});

describe('executor telemetry connectors', () => {
  it("hand a resumed operation's kept HTTP session to the connector they wrap", async () => {
    const { executorTracing } = await import('../../src/telemetry/executor-trace.js');
    const seen: unknown[] = [];
    const inner = (_server: string, _wire?: string, session?: unknown) => {
      seen.push(session);
      const never = () => Promise.reject(new Error('not called'));
      const methods = ['submit', 'lookupKey', 'getStatus', 'fetchResult', 'cancel', 'sendInput', 'close'];
      return Promise.resolve({
        wire: 'mcp-2025-11-25',
        version: 'x',
        ...Object.fromEntries(methods.map((m) => [m, never])),
      } as never);
    };
    const session = { id: 'kept-session', protocolVersion: '2025-11-25' };
    await executorMetrics().connect(inner)('s', 'mcp-2025-11-25', session);
    await executorTracing({ tracer }).connect(inner)('s', 'mcp-2025-11-25', session);
    expect(seen).toEqual([session, session]);
  });
});
