/**
 * The bridge's native 2025-11-25 front in front of a server no one here wrote:
 * `@modelcontextprotocol/server-everything` over stdio behind `terminus bridge`, an SDK 1.32 host
 * that declares tasks in front. The upstream's stage messages reach the host as the task's
 * `statusMessage`, and a synchronous upstream tool runs as a task of the bridge's own.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
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

  it('T-68 bad task requests get the wire errors and store nothing: a malformed task, an unknown tool, an unknown id', async () => {
    const refused = async (request: Promise<unknown>): Promise<number> => {
      const error = await request.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(McpError);
      return (error as McpError).code;
    };
    const call = (params: Record<string, unknown>) =>
      client.request({ method: 'tools/call', params: params as never }, CallToolResultSchema);
    expect(await refused(call({ name: 'echo', arguments: { message: 'x' }, task: 'soon' }))).toBe(-32602);
    expect(await refused(call({ name: 'no_such_tool', arguments: {}, task: {} }))).toBe(-32602);
    expect(await refused(client.experimental.tasks.getTask('op_00000000-0000-4000-8000-000000000000'))).toBe(-32602);
    expect(await refused(client.experimental.tasks.cancelTask('x'.repeat(300)))).toBe(-32602);
    // Nothing was stored: the host's task list holds only the two tasks above.
    const { tasks } = await client.experimental.tasks.listTasks();
    expect(tasks).toHaveLength(2);
  });
});
