/**
 * The bridge's sessionful 2025-11-25 HTTP leg (`src/bridge/legacy-sessions.ts`) with real SDK
 * servers and transports: a session is bound to the caller that opened it, and past the cap the
 * least recently used session makes room (a host that never ends its session cannot lock others out).
 */
import { Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/ports.js';
import { LegacySessions } from '../../src/bridge/legacy-sessions.js';
import { httpOwnerOf } from '../../src/bridge/server.js';

const URL_ = 'http://127.0.0.1/mcp';
const headers = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...extra,
});

function sessions(maxSessions: number): { leg: LegacySessions; opened: Request[] } {
  const opened: Request[] = [];
  const leg = new LegacySessions({
    factory: () => {
      const server = new Server({ name: 'leg-test', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', () => ({ tools: [] }));
      return server;
    },
    logger: silentLogger,
    ownerOf: httpOwnerOf,
    opening: (request) => opened.push(request),
    maxSessions,
  });
  return { leg, opened };
}

async function initialize(leg: LegacySessions, token?: string): Promise<string> {
  const response = await leg.handle(
    new Request(URL_, {
      method: 'POST',
      headers: headers(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'h', version: '1' } },
      }),
    }),
  );
  expect(response.status).toBe(200);
  await response.text();
  return response.headers.get('mcp-session-id')!;
}

async function list(leg: LegacySessions, session: string, token?: string): Promise<number> {
  const response = await leg.handle(
    new Request(URL_, {
      method: 'POST',
      headers: headers({
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    }),
  );
  await response.text();
  return response.status;
}

describe('the bridge 2025-11-25 HTTP sessions', () => {
  it('S8 a session answers only the caller that opened it (another Authorization gets 404)', async () => {
    const { leg, opened } = sessions(10);
    const mine = await initialize(leg, 'alice');
    expect(opened).toHaveLength(1);
    expect(await list(leg, mine, 'alice')).toBe(200);
    expect(await list(leg, mine, 'bob')).toBe(404);
    expect(await list(leg, mine)).toBe(404);
    expect(await list(leg, 'no-such-session', 'alice')).toBe(404);
    await leg.close();
  });

  it('past the cap the least recently used session is closed, never the new one refused', async () => {
    const { leg } = sessions(2);
    const first = await initialize(leg);
    const second = await initialize(leg);
    expect(await list(leg, first)).toBe(200); // first is now the most recently used
    const third = await initialize(leg);
    expect(leg.size).toBe(2);
    expect(await list(leg, second)).toBe(404);
    expect(await list(leg, first)).toBe(200);
    expect(await list(leg, third)).toBe(200);
    await leg.close();
  });
});
