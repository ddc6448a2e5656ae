import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Json } from './helpers.js';

/**
 * `terminus serve --stdio` (the real CLI, demo tools) with the SDK 1.32 client on the 2025-11-25
 * wire: a stdio connection is one session, so the input side channel and `tasks.list` work there.
 */
const root = new URL('../..', import.meta.url).pathname;
let dir: string;
let client: Client;
const asked: Json[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-stdio-2025-'));
  client = new Client({ name: 'sdk-1.32-stdio', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { confirm: true } };
  });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--stdio', '--db', join(dir, 'stdio.db')],
      cwd: root,
      stderr: 'ignore',
    }),
  );
}, 60_000);
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('2025-11-25 tasks over stdio', () => {
  test('T-01 T-77: stdio advertises tasks with list (its one client is identified)', () => {
    expect(client.getServerCapabilities()?.tasks).toEqual({ cancel: {}, list: {}, requests: { tools: { call: {} } } });
  });

  test('T-12 T-43 T-52: a required tool runs as a task and its confirmation arrives through tasks/result', async () => {
    await client.listTools();
    const messages: Json[] = [];
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'migrate', arguments: { rows: 50, table: 'stdio_orders' } },
      CallToolResultSchema,
    )) {
      messages.push(m);
    }
    const taskId = messages[0].task.taskId as string;
    expect(messages.at(-1).type).toBe('result');
    expect(JSON.stringify(messages.at(-1).result.content)).toMatch(/50/);
    expect(asked).toHaveLength(1);
    expect(asked[0]._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(taskId);
  }, 60_000);
});
