import { afterEach, describe, expect, test } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createLocalEvents, type TaskEvents } from '../../src/store/events.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { conformanceTools } from '../../src/tools/conformance/index.js';

/**
 * Issue 12 item 4: an `initialize` refused with 400 left an engine listener behind (with its SDK
 * server and transport), forever. Counted directly: the engine's event subscribers, which every
 * 2025 session's status notifier holds, after N refused initializes.
 */
function countingEvents(): TaskEvents & { readonly listeners: () => number } {
  const inner = createLocalEvents();
  let count = 0;
  return {
    publish: (event) => inner.publish(event),
    subscribe(listener) {
      count++;
      const unsubscribe = inner.subscribe(listener);
      let done = false;
      return () => {
        if (!done) count--;
        done = true;
        unsubscribe();
      };
    },
    listeners: () => count,
  };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function start() {
  const events = countingEvents();
  const store = createMemoryTaskStore();
  const engine = createEngine({ store, tools: conformanceTools, clock: systemClock, ids: systemIds, events });
  engine.start();
  const registry = createWireRegistry({ disabled: [] });
  const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters });
  const http = await server.serveHttp({ port: 0 });
  close = async () => {
    await http.close();
    await engine.stop();
    await store.close();
  };
  return { url: http.url, events };
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const initialize = (params: unknown, headers: Record<string, string> = HEADERS) => ({
  method: 'POST',
  headers,
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params }),
});
const GOOD = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'leak-test', version: '1' } };

const REFUSED: Record<string, RequestInit> = {
  'bad capabilities': initialize({ ...GOOD, capabilities: 'all of them' }),
  'no clientInfo': initialize({ protocolVersion: '2025-11-25', capabilities: {} }),
  'Accept: text/html': initialize(GOOD, { 'content-type': 'application/json', accept: 'text/html' }),
};

describe('refused initialize requests leave nothing behind (issue 12 item 4)', () => {
  test('N refused initializes of each kind: 400 each, and no listener, server or transport retained', async () => {
    const { url, events } = await start();
    const baseline = events.listeners();
    const N = 30;
    for (const [kind, init] of Object.entries(REFUSED)) {
      for (let i = 0; i < N; i++) {
        const response = await fetch(url, init);
        await response.arrayBuffer();
        expect(response.status, kind).toBeGreaterThanOrEqual(400);
      }
      expect(events.listeners(), `after ${N} refused initializes (${kind})`).toBe(baseline);
    }
    // The count does see sessions: an accepted initialize holds exactly one listener, DELETE frees it.
    const opened = await fetch(url, initialize(GOOD));
    await opened.arrayBuffer();
    expect(opened.status).toBe(200);
    expect(events.listeners()).toBe(baseline + 1);
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    const deleted = await fetch(url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    });
    await deleted.arrayBuffer();
    expect(events.listeners()).toBe(baseline);
  });
});
