import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/core/ports.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminus, type Terminus } from '../../src/server/create-terminus.js';
import { EXT, PROTOCOL } from './helpers.js';

/**
 * Issue 15 item 1 over stdio: the author serves their McpServer with the SDK's own `serveStdio`,
 * `terminus.install(server, ctx)` in its factory; the plain tool and resource answer, the task tool
 * makes a durable task owned by `stdio` (no requestInfo in a stdio context).
 */
const report = defineTaskTool({
  name: 'report',
  description: 'Builds a report',
  inputSchema: z.object({ pages: z.number().int() }),
  taskSupport: 'required',
  handler: async ({ pages }) => ({ content: [{ type: 'text', text: `${pages} pages` }] }),
});

let terminus: Terminus;
let client: Client;
let close: () => Promise<void>;

beforeAll(async () => {
  terminus = await createTerminus({
    db: ':memory:',
    tools: [report],
    logger: silentLogger,
    engine: { claimIntervalMs: 20 },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const stdio = serveStdio(
    (ctx) => {
      const server = new McpServer({ name: 'author', version: '1.0.0' });
      server.registerTool('ping', { description: 'pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
      server.registerResource('readme', 'notes://readme', {}, async (uri) => ({
        contents: [{ uri: uri.href, text: 'Notes' }],
      }));
      return terminus.install(server, ctx);
    },
    { transport: serverSide },
  );
  client = new Client(
    { name: 'stdio-install-test', version: '1.0.0' },
    { capabilities: { extensions: { [EXT]: {} } }, versionNegotiation: { mode: { pin: PROTOCOL } } },
  );
  await client.connect(clientSide);
  close = async () => {
    await client.close();
    await stdio.close();
    await terminus.close();
  };
});
afterAll(() => close());

describe('install on a server the author serves with serveStdio', () => {
  it('lists both tools and answers the plain tool and resource', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ping', 'report']);
    expect((await client.callTool({ name: 'ping', arguments: {} })).content).toEqual([{ type: 'text', text: 'pong' }]);
    expect((await client.readResource({ uri: 'notes://readme' })).contents[0]).toMatchObject({ text: 'Notes' });
  });

  it('the task tool is a durable task owned by stdio', async () => {
    const loose = z.looseObject({});
    // The SDK 2.4 client refuses a `task` answer to tools/call (the ext-tasks client handles it);
    // the refusal itself shows the server answered with a task.
    await expect(
      client.request({ method: 'tools/call', params: { name: 'report', arguments: { pages: 2 } } }, loose),
    ).rejects.toThrow(/Unsupported result type 'task'/);
    const { tasks } = await terminus.engine.list('stdio', { limit: 10 });
    expect(tasks.map((t) => t.tool)).toEqual(['report']);
    const taskId = tasks[0]?.id ?? '';
    let task = await terminus.engine.get('stdio', taskId);
    while (task.status !== 'completed') {
      task = await terminus.engine.waitForChange('stdio', taskId, { sinceUpdatedAt: task.updatedAt, timeoutMs: 5000 });
    }
    const got = await client.request({ method: 'tasks/get', params: { taskId } }, loose);
    expect(got).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: '2 pages' }] } });
  });
});
