/**
 * `serveStdio().closed`: the library's way to learn that the stdio client has gone (it closed the
 * server's stdin, the MCP stdio binding's shutdown), so a process serving one client can stop its
 * engine and exit instead of outliving its host. The SDK keeps its own close handler.
 */
import { PassThrough } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, createTerminusServer } from '../../src/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { noticeClose } from '../../src/server/stdio-closed.js';

const engines: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.stop();
});

function served(): {
  input: PassThrough;
  output: PassThrough;
  connection: ReturnType<ReturnType<typeof createTerminusServer>['serveStdio']>;
} {
  const engine = createEngine({ store: createMemoryTaskStore(), tools: [] });
  engines.push(engine);
  const input = new PassThrough();
  const output = new PassThrough();
  const connection = createTerminusServer({ engine }).serveStdio({
    transport: new StdioServerTransport(input, output),
  });
  return { input, output, connection };
}

const pending = Symbol('pending');
const settled = (promise: Promise<void>): Promise<void | typeof pending> =>
  Promise.race([promise, new Promise<typeof pending>((resolve) => setTimeout(() => resolve(pending), 50))]);

describe('serveStdio().closed', () => {
  it('stays pending while the client is connected, and resolves when it closes stdin', async () => {
    const { input, output, connection } = served();
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
    );
    await new Promise((resolve) => output.once('data', resolve));
    expect(await settled(connection.closed)).toBe(pending);
    input.end();
    expect(await settled(connection.closed)).toBeUndefined();
  });

  it('resolves on close() too', async () => {
    const { connection } = served();
    await connection.close();
    expect(await settled(connection.closed)).toBeUndefined();
  });

  it("noticeClose leaves the owner's onclose handler running first", () => {
    const transport = new StdioServerTransport(new PassThrough(), new PassThrough());
    const { transport: watched, closed } = noticeClose(transport);
    const calls: string[] = [];
    watched.onclose = () => calls.push('owner');
    void closed.then(() => calls.push('closed'));
    transport.onclose?.();
    expect(calls).toEqual(['owner']);
    return closed.then(() => expect(calls).toEqual(['owner', 'closed']));
  });
});
