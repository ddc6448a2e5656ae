/**
 * The bridge's one reach into SDK private state (`src/bridge/sdk-initialize.ts`): the 2025-11-25
 * `initialize` answer trimmed per host. If an SDK update renames `Server._oninitialize`, the first
 * test fails and says where to look; the second checks the behaviour with a real SDK client.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../src/core/ports.js';
import { SDK_INITIALIZE_METHOD, sdkInitialize, trimInitializeAnswer } from '../../src/bridge/sdk-initialize.js';

const TASKS = { cancel: {}, list: {}, requests: { tools: { call: {} } } };
const newServer = (): Server =>
  new Server({ name: 'trim-test', version: '1.0.0' }, { capabilities: { tools: {}, tasks: TASKS } });

async function capabilitiesSeenBy(declaresTasks: boolean): Promise<Record<string, unknown> | undefined> {
  const server = newServer();
  expect(trimInitializeAnswer(server, (p) => (p.capabilities.tasks === undefined ? ['tasks'] : []), silentLogger)).toBe(
    true,
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: declaresTasks ? { tasks: {} } : {} });
  await client.connect(clientSide);
  const seen = client.getServerCapabilities() as Record<string, unknown> | undefined;
  // The SDK's own bookkeeping still ran: the server knows the host's capabilities.
  expect(server.getClientCapabilities()?.tasks !== undefined).toBe(declaresTasks);
  await client.close();
  await server.close();
  return seen;
}

describe('the SDK initialize hook of the bridge', () => {
  it(`the SDK still has Server.${SDK_INITIALIZE_METHOD} (if not: adapt src/bridge/sdk-initialize.ts to the new SDK)`, () => {
    expect(
      sdkInitialize(newServer()),
      `@modelcontextprotocol/server no longer has Server.${SDK_INITIALIZE_METHOD}: src/bridge/sdk-initialize.ts must be adapted`,
    ).not.toBeNull();
  });

  it('T-01 a 2025 host that declares tasks is offered them; one that does not, is not (the rest of the answer unchanged)', async () => {
    expect(await capabilitiesSeenBy(true)).toMatchObject({ tools: {}, tasks: TASKS });
    const plain = await capabilitiesSeenBy(false);
    expect(plain).toMatchObject({ tools: {} });
    expect(plain?.tasks).toBeUndefined();
  });

  it('without the SDK method the answer is left as the SDK gives it, and a warning names the file', () => {
    const server = newServer();
    Object.defineProperty(server, SDK_INITIALIZE_METHOD, { value: undefined });
    const warned: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (message, fields) => warned.push(`${message} ${JSON.stringify(fields)}`),
    };
    expect(trimInitializeAnswer(server, () => ['tasks'], logger)).toBe(false);
    expect(warned.join('\n')).toContain('src/bridge/sdk-initialize.ts');
  });
});
