import type { IncomingMessage } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/runner/engine.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { conformancePreflights, conformanceTools } from '../../src/tools/conformance/index.js';
import { rpc, type RpcOptions } from './helpers.js';

/**
 * Preflights (MRTR, X-11) ask forms, the client's model and its roots, carry signed state between
 * rounds, and never ask what the caller did not declare; on 2025-era sessions the same preflights
 * become server-to-client requests. Against the conformance fixtures on a real HTTP server, with
 * raw 2026-07-28 requests and the real SDK 1.32 client.
 */
let url: string;
let close: () => Promise<void>;

async function authenticate(req: IncomingMessage): Promise<AuthInfo | undefined> {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  return token === undefined ? undefined : { token, clientId: token, scopes: [] };
}

beforeAll(async () => {
  const store = createMemoryTaskStore();
  const engine = createEngine({ store, tools: conformanceTools, claimIntervalMs: 20 });
  engine.start();
  const wires = createWireRegistry().adapters;
  const server = createTerminusServer({ engine, wires, preflights: conformancePreflights });
  const http = await server.serveHttp({ port: 0, authenticate });
  url = http.url;
  close = async () => {
    await http.close();
    await engine.stop();
    await store.close();
  };
});
afterAll(() => close());

const ALL = { elicitation: {}, sampling: {}, roots: {} };
const caps = (capabilities: Record<string, unknown>): RpcOptions => ({
  meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities },
});
const call = (name: string, extra: Record<string, unknown> = {}, options: RpcOptions = caps(ALL)) =>
  rpc(url, 'tools/call', { name, arguments: {}, ...extra }, options);
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

describe('preflights on the 2026-07-28 wire', () => {
  it('X-11 a question the request cannot answer is -32021 naming the capability (HTTP 400), and nothing is created', async () => {
    const answer = await call('test_tool_with_task', {}, caps({ extensions: { 'io.modelcontextprotocol/tasks': {} } }));
    expect(answer.status).toBe(400);
    expect(answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    const sampling = await call('test_missing_capability', {}, caps({ elicitation: {} }));
    expect(sampling.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
  });

  it('X-11 a preflight with a choice asks only what the request declared', async () => {
    const answer = await call('test_input_required_result_capabilities', {}, caps({ sampling: {} }));
    expect(answer.result.resultType).toBe('input_required');
    expect(Object.values(answer.result.inputRequests).map((r) => (r as { method: string }).method)).toEqual([
      'sampling/createMessage',
    ]);
  });

  it('X-11 sampling and roots questions, answered on the retry', async () => {
    const first = await call('test_input_required_result_sampling');
    expect(first.result.inputRequests.capital_question).toMatchObject({
      method: 'sampling/createMessage',
      params: { maxTokens: 100 },
    });
    const said = { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm', stopReason: 'endTurn' };
    const second = await call('test_input_required_result_sampling', { inputResponses: { capital_question: said } });
    expect(second.result.content).toEqual([{ type: 'text', text: 'LLM said: Paris' }]);

    const ask = await call('test_input_required_result_list_roots');
    expect(ask.result.inputRequests.client_roots).toMatchObject({ method: 'roots/list' });
    const roots = { roots: [{ uri: 'file:///work', name: 'work' }] };
    const done = await call('test_input_required_result_list_roots', { inputResponses: { client_roots: roots } });
    expect(done.result.content[0].text).toBe('Roots: file:///work');
  });

  it('X-11 state carries an earlier round across rounds; each round gets a new requestState', async () => {
    const r1 = await call('test_input_required_result_multi_round');
    expect(typeof r1.result.requestState).toBe('string');
    const r2 = await call('test_input_required_result_multi_round', {
      inputResponses: { step1: accept({ name: 'Alice' }) },
      requestState: r1.result.requestState,
    });
    expect(Object.keys(r2.result.inputRequests)).toEqual(['step2']);
    expect(r2.result.requestState).not.toBe(r1.result.requestState);
    const r3 = await call('test_input_required_result_multi_round', {
      inputResponses: { step2: accept({ color: 'blue' }) },
      requestState: r2.result.requestState,
    });
    expect(r3.result.content[0].text).toBe('Alice likes blue');
  });

  it('X-11 a tampered state, a state of another tool and a state of another caller are -32602', async () => {
    const mint = async (name: string, options?: RpcOptions) =>
      (await call(name, {}, options ?? caps(ALL))).result.requestState as string;
    const answer = { confirm: accept({ ok: true }) };
    const state = await mint('test_input_required_result_tampered_state');
    const tampered = await call('test_input_required_result_tampered_state', {
      inputResponses: answer,
      requestState: `${state}x`,
    });
    expect(tampered.error).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } });
    const foreignTool = await call('test_input_required_result_request_state', {
      inputResponses: answer,
      requestState: state,
    });
    expect(foreignTool.error).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } });
    const alices = await mint('test_input_required_result_request_state', { ...caps(ALL), token: 'alice' });
    const asBob = await call(
      'test_input_required_result_request_state',
      { inputResponses: answer, requestState: alices },
      { ...caps(ALL), token: 'bob' },
    );
    expect(asBob.error).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } });
    const asAlice = await call(
      'test_input_required_result_request_state',
      { inputResponses: answer, requestState: alices },
      { ...caps(ALL), token: 'alice' },
    );
    expect(asAlice.result.content[0].text).toBe('state-ok: ok=true');
  });
});

describe('the same preflights on a 2025-11-25 session (SDK 1.32 client)', () => {
  async function connect(capabilities: Record<string, unknown>): Promise<Client> {
    const client = new Client({ name: 'preflight-2025', version: '1.0.0' }, { capabilities });
    if ('sampling' in capabilities) {
      client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
        role: 'assistant',
        content: { type: 'text', text: `echo ${(request.params.messages[0]?.content as { text: string }).text}` },
        model: 'test-model',
        stopReason: 'endTurn',
      }));
    }
    if ('roots' in capabilities) {
      client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///repo', name: 'repo' }] }));
    }
    const names = ['Alice', 'blue'];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const field = Object.keys(
        (request.params as { requestedSchema: { properties: object } }).requestedSchema.properties,
      )[0];
      return { action: 'accept', content: { [field ?? 'name']: names.shift() ?? '' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    return client;
  }

  it('sampling, roots and a two-round form with state become server-to-client requests', async () => {
    const client = await connect(ALL);
    const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } });
    expect(sampled.content).toEqual([{ type: 'text', text: 'LLM response: echo hi' }]);
    const roots = await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} });
    expect(roots.content).toEqual([{ type: 'text', text: 'Roots: file:///repo' }]);
    const rounds = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
    expect(rounds.content).toEqual([{ type: 'text', text: 'Alice likes blue' }]);
    await client.close();
  });

  it('a client without the capability gets -32600 input_unavailable naming it', async () => {
    const client = await connect({ elicitation: {} });
    const error = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32600);
    expect((error as McpError).data).toMatchObject({
      reason: 'input_unavailable',
      requiredCapabilities: { sampling: {} },
    });
    await client.close();
  });
});
