/**
 * Baselines B0 and B1: what a user would run without mcp-terminus. `@modelcontextprotocol/sdk` 1.32.x
 * with its experimental tasks and `InMemoryTaskStore` (reference 1.17), over stdio or Streamable
 * HTTP (sessionful, the SDK's default transport), serving the same tool as the bench server:
 *
 * - `bench_sleep {ms}` as a task (B0): `CreateTaskResult` first, the work in the background, then
 *   `storeTaskResult` (which also pushes `notifications/tasks/status`).
 * - `bench_sleep_sync {ms}` as a plain synchronous `tools/call` (B1).
 *
 *   node --import tsx bench/baselines/sdk132-server.ts --transport http|stdio [--poll-ms 100]
 *        [--seed N] [--commit-log FILE]
 *
 * `--seed N` puts N open tasks in the store through `InMemoryTaskStore.createTask` before serving.
 * `--commit-log FILE` appends `{"id","t"}` when a terminal result is stored (B0's "commit").
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { wallMs } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'http' },
    'poll-ms': { type: 'string', default: '100' },
    seed: { type: 'string', default: '0' },
    'commit-log': { type: 'string' },
  },
});
const pollInterval = Number(values['poll-ms']);
const commitLog = values['commit-log'];

/** The SDK's store, with the instant each terminal result is stored logged. */
class LoggingTaskStore extends InMemoryTaskStore {
  override async storeTaskResult(
    taskId: string,
    status: 'completed' | 'failed',
    result: Result,
    sessionId?: string,
  ): Promise<void> {
    await super.storeTaskResult(taskId, status, result, sessionId);
    if (commitLog !== undefined) appendFileSync(commitLog, `${JSON.stringify({ id: taskId, t: wallMs() })}\n`);
  }
}

const taskStore = new LoggingTaskStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();

for (let i = 0; i < Number(values.seed); i += 1) {
  await taskStore.createTask({ ttl: null, pollInterval }, `seed-${i}`, {
    method: 'tools/call',
    params: { name: 'bench_parked', arguments: { i } },
  });
}

const shape = { ms: z.number().min(0) };
const answer = (ms: number) => ({ content: [{ type: 'text' as const, text: `slept ${ms} ms` }] });

/** One `McpServer` per connection (stdio) or HTTP session, all on the one task store. */
function buildServer(): McpServer {
  const server = new McpServer(
    { name: 'sdk132-baseline', version: '1.0.0' },
    {
      capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue,
    },
  );
  server.experimental.tasks.registerToolTask(
    'bench_sleep',
    {
      description: 'Waits `ms` milliseconds, then answers.',
      inputSchema: z.object(shape),
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async (args, extra) => {
        const { ms } = z.object(shape).parse(args);
        const task = await extra.taskStore.createTask({ ttl: 3_600_000, pollInterval });
        const work = async (): Promise<void> => {
          if (ms > 0) await sleep(ms);
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', answer(ms));
        };
        work().catch(() => undefined);
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  );
  server.registerTool(
    'bench_sleep_sync',
    { description: 'Waits `ms` milliseconds, then answers (plain call).', inputSchema: shape },
    async ({ ms }) => {
      if (ms > 0) await sleep(ms);
      return answer(ms);
    },
  );
  return server;
}

if (values.transport === 'stdio') {
  await buildServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const handle = async (): Promise<void> => {
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (transport === undefined) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => {
            sessions.set(sessionId, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId !== undefined) sessions.delete(created.sessionId);
        };
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    };
    handle().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
  process.on('SIGTERM', () => {
    http.closeAllConnections();
    http.close();
  });
}

process.on('SIGTERM', () => {
  taskStore.cleanup();
  process.exit(0);
});
