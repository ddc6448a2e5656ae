import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMcpHandler, McpServer, Server, type McpHttpHandler } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminus, type Terminus } from '../../src/server/create-terminus.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { silentLogger } from '../../src/core/ports.js';
import { toWebRequest, writeWebResponse } from '../../src/server/http/node-bridge.js';
import { LegacySession } from '../wires/helpers.js';
import { createTask, isTerminalStatus, pollUntil, rpc } from './helpers.js';

/**
 * Issue 15 item 1: `createTerminus().install(server, ctx)` adds durable task tools to an SDK server
 * the author already has (plain tool, resource, prompt), served by the author's own
 * `createMcpHandler`; the plain surface keeps working on both eras.
 */
const report = defineTaskTool({
  name: 'report',
  description: 'Builds a report',
  inputSchema: z.object({ pages: z.number().int().min(1) }),
  outputSchema: z.object({ pages: z.number() }),
  handler: async ({ pages }, ctx) => {
    await ctx.progress(pages, pages, 'done');
    return { content: [{ type: 'text', text: `${pages} pages` }], structuredContent: { pages } };
  },
});

/** The author's server, as they had it before mcp-terminus: one plain tool, a resource, a prompt. */
function authorServer(): McpServer {
  const server = new McpServer({ name: 'author', version: '1.0.0' });
  server.registerTool(
    'ping',
    { description: 'Answers pong', inputSchema: z.object({ word: z.string().default('pong') }) },
    async ({ word }) => ({ content: [{ type: 'text', text: word }] }),
  );
  server.registerResource('config', 'config://app', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'config text' }],
  }));
  server.registerPrompt('review', { argsSchema: z.object({ code: z.string() }) }, ({ code }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Review ${code}` } }],
  }));
  return server;
}

/** The author's own node:http mount of an SDK fetch handler. */
async function listen(handler: McpHttpHandler): Promise<{ url: string; close(): Promise<void> }> {
  const http: HttpServer = createServer((req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    void toWebRequest(req, abort.signal, 4 * 1024 * 1024)
      .then(({ request }) => handler.fetch(request))
      .then((response) => writeWebResponse(res, response));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The 2026-07-28 `Mcp-Name` routing header that resources/read and prompts/get carry. */
const named = (name: string) => ({ headers: { 'mcp-name': name } });

let dir: string;
let terminus: Terminus;
let url: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-install-'));
  terminus = await createTerminus({
    db: join(dir, 'nested', 'tasks.db'),
    tools: [report],
    logger: silentLogger,
    engine: { claimIntervalMs: 20 },
  });
  const handler = createMcpHandler((ctx) => terminus.install(authorServer(), ctx));
  const served = await listen(handler);
  url = served.url;
  stop = () => served.close();
});
afterAll(async () => {
  await stop();
  await terminus.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an McpServer with a plain tool, a resource and a prompt, plus install()', () => {
  it('opens the SQLite file (and its folder) the db option names', () => {
    expect(existsSync(join(dir, 'nested', 'tasks.db'))).toBe(true);
  });

  it('2026-07-28: tools/list has the plain tool and the task tool; the extension is advertised', async () => {
    const list = await rpc(url, 'tools/list');
    expect(list.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(['ping', 'report']);
    const discover = await rpc(url, 'server/discover');
    expect(discover.result.capabilities.extensions).toHaveProperty(['io.modelcontextprotocol/tasks']);
    expect(discover.result.capabilities).toHaveProperty('resources');
    expect(discover.result.capabilities).toHaveProperty('prompts');
  });

  it('2026-07-28: the plain tool, the resource and the prompt answer as before', async () => {
    const ping = await rpc(url, 'tools/call', { name: 'ping', arguments: { word: 'hi' } });
    expect(ping.result).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
    const read = await rpc(url, 'resources/read', { uri: 'config://app' }, named('config://app'));
    expect(read.result.contents[0].text).toBe('config text');
    const prompt = await rpc(url, 'prompts/get', { name: 'review', arguments: { code: 'x' } }, named('review'));
    expect(prompt.result.messages[0].content.text).toBe('Review x');
  });

  it('2026-07-28: the task tool is a durable task on the SQLite store', async () => {
    const taskId = await createTask(url, 'report', { pages: 2 });
    const task = await pollUntil(url, taskId, isTerminalStatus);
    expect(task).toMatchObject({ status: 'completed', result: { structuredContent: { pages: 2 } } });
    expect(await terminus.engine.get('anonymous', taskId)).toMatchObject({ status: 'completed' });
  });

  it('2026-07-28: invalid arguments of either kind of tool are the owner’s error', async () => {
    const bad = await rpc(url, 'tools/call', { name: 'report', arguments: { pages: 0 } });
    expect(bad.error?.code).toBe(-32602);
    const unknown = await rpc(url, 'tools/call', { name: 'nope', arguments: {} });
    expect(unknown.error ?? unknown.result?.isError).toBeTruthy();
  });

  it('2025-11-25 (stateless legacy leg): both tools listed, the plain one answers, the task one makes a task', async () => {
    const session = await LegacySession.open(url, undefined);
    const list = await session.request('tools/list');
    const byName = Object.fromEntries(list.result.tools.map((t: { name: string }) => [t.name, t]));
    expect(byName.report.execution).toEqual({ taskSupport: 'optional' });
    expect(byName.ping.execution).toBeUndefined();
    const ping = await session.request('tools/call', { name: 'ping', arguments: {} });
    expect(ping.result.content[0].text).toBe('pong');
    const created = await session.request('tools/call', { name: 'report', arguments: { pages: 1 }, task: {} });
    const taskId = created.result.task.taskId as string;
    expect(created.result.task.status).toBe('working');
    for (let i = 0; i < 200; i++) {
      const got = await session.request('tasks/get', { taskId });
      if (got.result.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const result = await session.request('tasks/result', { taskId });
    expect(result.result.structuredContent).toEqual({ pages: 1 });
    const read = await session.request('resources/read', { uri: 'config://app' });
    expect(read.result.contents[0].text).toBe('config text');
  });
});

describe('install on a low-level Server', () => {
  it('keeps its own tools/list and tools/call beside the task tools', async () => {
    const handler = createMcpHandler((ctx) => {
      const server = new Server({ name: 'low', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', () => ({
        tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
      }));
      server.setRequestHandler('tools/call', (request) => ({
        content: [{ type: 'text', text: `echo ${request.params.name}` }],
      }));
      return terminus.install(server, ctx);
    });
    const served = await listen(handler);
    try {
      const list = await rpc(served.url, 'tools/list');
      expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(['report', 'echo']);
      const echo = await rpc(served.url, 'tools/call', { name: 'echo', arguments: {} });
      expect(echo.result.content[0].text).toBe('echo echo');
      const taskId = await createTask(served.url, 'report', { pages: 1 });
      expect((await pollUntil(served.url, taskId, isTerminalStatus)).status).toBe('completed');
    } finally {
      await served.close();
    }
  });

  it('SEP-2243: a task tool on the author McpServer gets its Mcp-Param-* headers checked before dispatch (HTTP 400)', async () => {
    const routed = defineTaskTool({
      name: 'routed',
      description: 'Runs in a region',
      inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
      taskSupport: 'forbidden',
      handler: async ({ region }) => ({ content: [{ type: 'text', text: region }] }),
    });
    const own = await createTerminus({ db: join(dir, 'routed.db'), tools: [routed], logger: silentLogger });
    const served = await listen(createMcpHandler((ctx) => own.install(authorServer(), ctx)));
    try {
      const call = (region: string) =>
        rpc(
          served.url,
          'tools/call',
          { name: 'routed', arguments: { region: 'eu' } },
          { headers: { 'mcp-param-region': region } },
        );
      expect((await call('eu')).result.content[0].text).toBe('eu');
      const refused = await call('us');
      expect(refused.status).toBe(400);
      expect(refused.error).toMatchObject({ code: -32020 });
    } finally {
      await served.close();
      await own.close();
    }
  });

  it('relies on the SDK asking McpServer.toolInputSchemaJson for the Mcp-Param-* check (marked internal)', () => {
    const server = new McpServer({ name: 'x', version: '1' });
    expect(typeof (server as unknown as { toolInputSchemaJson: unknown }).toolInputSchemaJson).toBe('function');
  });

  it('relies on the SDK keeping _getRequestHandler (a protected accessor of Protocol)', () => {
    const server = new Server({ name: 'x', version: '1' }, { capabilities: { tools: {} } });
    expect(typeof (server as unknown as { _getRequestHandler: unknown })._getRequestHandler).toBe('function');
  });
});

describe('createTerminusServer with plain tools, resources and prompts (setup)', () => {
  it('serves them beside the task tools over its own HTTP server', async () => {
    const server = createTerminusServer({
      engine: terminus.engine,
      setup: (mcp) => {
        mcp.registerTool('ping', { description: 'Answers pong' }, async () => ({
          content: [{ type: 'text', text: 'pong' }],
        }));
        mcp.registerResource('config', 'config://app', {}, async (uri) => ({
          contents: [{ uri: uri.href, text: 'config text' }],
        }));
        mcp.registerPrompt('hello', {}, () => ({
          messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
        }));
      },
    });
    const http = await server.serveHttp({ port: 0 });
    try {
      const list = await rpc(http.url, 'tools/list');
      expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(['report', 'ping']);
      expect((await rpc(http.url, 'tools/call', { name: 'ping', arguments: {} })).result.content[0].text).toBe('pong');
      expect(
        (await rpc(http.url, 'resources/read', { uri: 'config://app' }, named('config://app'))).result.contents[0].text,
      ).toBe('config text');
      expect((await rpc(http.url, 'prompts/get', { name: 'hello' }, named('hello'))).result.messages).toHaveLength(1);
      const taskId = await createTask(http.url, 'report', { pages: 3 });
      expect((await pollUntil(http.url, taskId, isTerminalStatus)).status).toBe('completed');
    } finally {
      await http.close();
    }
  });
});

describe('createTerminus on PostgreSQL', () => {
  it('opens the store for a postgres:// URL and runs a task on it', async () => {
    const base = process.env.TERMINUS_TEST_PG_URL;
    if (base === undefined) throw new Error('TERMINUS_TEST_PG_URL is not set (test/global-setup.ts)');
    const pg = await createTerminus({
      db: base,
      tools: [report],
      pgSchema: `install_${process.pid}`,
      logger: silentLogger,
      engine: { claimIntervalMs: 20 },
    });
    try {
      const { task } = await pg.engine.submit({
        owner: 'o',
        tool: 'report',
        args: { pages: 1 },
        wire: 'mcp-tasks-ext',
      });
      let current = task;
      while (!isTerminalStatus(current)) {
        current = await pg.engine.waitForChange('o', task.id, { sinceUpdatedAt: current.updatedAt, timeoutMs: 5000 });
      }
      expect(current.status).toBe('completed');
    } finally {
      await pg.close();
    }
  });
});
