/**
 * The bridge's native 2025-11-25 front in front of a server no one here wrote:
 * `@modelcontextprotocol/server-everything` over stdio behind `terminus bridge`, an SDK 1.32 host
 * that declares tasks in front. The upstream's stage messages reach the host as the task's
 * `statusMessage`, and a synchronous upstream tool runs as a task of the bridge's own.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, killAll, MAIN, ROOT, tempDir, tsNode } from '../cli/helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-bridge-native-everything-');
let client: Client;

beforeAll(async () => {
  client = new Client({ name: 'sdk-1.32-host', version: '1.0.0' }, { capabilities: { tasks: {} } });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: tsNode(
        MAIN,
        'bridge',
        '--upstream',
        `everything=stdio:'${process.execPath}' '${EVERYTHING}' stdio`,
        '--ledger',
        join(dir.path, 'b.db'),
      ),
      cwd: ROOT,
      stderr: 'ignore',
    }),
    { timeout: 60_000 },
  );
}, SLOW);
afterAll(async () => {
  await client?.close();
  killAll();
  dir.remove();
});

type Streamed = { type: string; task?: { taskId: string; status: string; statusMessage?: string }; result?: unknown };

async function stream(name: string, args: Record<string, unknown>): Promise<Streamed[]> {
  const messages: Streamed[] = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    { timeout: 60_000 },
  )) {
    messages.push(message);
  }
  return messages;
}

describe('bridge native 2025-11-25 front in front of server-everything', () => {
  it(
    "T-90 the upstream's stage messages are the task's statusMessage; the report comes back",
    async () => {
      await client.listTools(); // callToolStream reads execution.taskSupport from the cached list
      const messages = await stream('simulate-research-query', { topic: 'tides' });
      expect(messages[0]?.type).toBe('taskCreated');
      const said = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task?.statusMessage ?? '');
      // Its stages ("Gathering sources...", ...) as server-everything words them.
      expect(said.some((s) => s.endsWith('...'))).toBe(true);
      const last = messages.at(-1)!;
      expect(last.type).toBe('result');
      expect(JSON.stringify(last.result)).toContain('# Research Report: tides');
    },
    SLOW,
  );

  it(
    'T-15 a synchronous upstream tool is listed as able to run as a task and runs as one of the bridge',
    async () => {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'echo')?.execution).toEqual({ taskSupport: 'optional' });
      const messages = await stream('echo', { message: 'hi' });
      expect(messages[0]?.type).toBe('taskCreated');
      expect(messages[0]?.task?.taskId).toMatch(/^op_/);
      expect(JSON.stringify(messages.at(-1)?.result)).toContain('Echo: hi');
    },
    SLOW,
  );
});
