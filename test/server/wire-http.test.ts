import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, EXT, isTerminalStatus, pollUntil, rpc, startServer, type TestServer } from './helpers.js';
import { conformanceTools } from '../../src/tools/conformance/index.js';

/** The 2026-07-28 Tasks-extension wire over real HTTP (127.0.0.1, port 0), raw JSON-RPC via fetch. */
let server: TestServer;
let url: string;

beforeAll(async () => {
  server = await startServer();
  url = server.url;
});
afterAll(async () => {
  await server.close();
});

const requiredExt = { requiredCapabilities: { extensions: { [EXT]: {} } } };

describe('negotiation and gating', () => {
  it('advertises the extension on server/discover and no legacy tasks capability (X-63)', async () => {
    const answer = await rpc(url, 'server/discover');
    expect(answer.result.capabilities.extensions).toEqual({ [EXT]: {} });
    expect(answer.result.capabilities).not.toHaveProperty('tasks');
  });

  it('tools/list carries every fixture with an object input schema', async () => {
    const answer = await rpc(url, 'tools/list');
    const names = (answer.result.tools as { name: string; inputSchema: { type: string } }[]).map((t) => t.name);
    expect(names).toEqual(conformanceTools.map((t) => t.name));
    expect(names).toEqual(
      expect.arrayContaining([
        'confirm_delete',
        'failing_job',
        'greet',
        'multi_input',
        'protocol_error_job',
        'slow_compute',
        'test_tool_with_task',
        'test_simple_text',
        'test_input_required_result_elicitation',
      ]),
    );
    // The suite's header scenario calls the first listed tool with `{}`.
    expect(names[0]).toBe('test_simple_text');
    for (const tool of answer.result.tools) expect(tool.inputSchema.type).toBe('object');
  });

  it('X-01 X-66 a non-declaring request to an optional tool runs inline, never a task', async () => {
    const answer = await rpc(
      url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0 } },
      { declare: false },
    );
    expect(answer.result.resultType).toBe('complete');
    expect(answer.result).not.toHaveProperty('taskId');
    expect(answer.result.content[0].text).toContain('done');
  });

  it('X-04 X-64 a required-task tool without the extension is -32021 with data.requiredCapabilities, HTTP 400', async () => {
    const answer = await rpc(url, 'tools/call', { name: 'failing_job', arguments: {} }, { declare: false });
    expect(answer.status).toBe(400);
    expect(answer.error?.code).toBe(-32021);
    expect(answer.error?.data).toEqual(requiredExt);
  });

  it('X-47 -32021 wins over an unknown task id on every task method and the lookup', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['tasks/get', { taskId: 'gate-test' }],
      ['tasks/update', { taskId: 'gate-test', inputResponses: {} }],
      ['tasks/cancel', { taskId: 'gate-test' }],
      ['terminus/tasks/lookup', { submissionKey: 'gate-test' }],
    ];
    for (const [method, params] of calls) {
      const answer = await rpc(url, method, params, { declare: false });
      expect(answer.error, method).toMatchObject({ code: -32021, data: requiredExt });
    }
  });

  it('X-47 a non-declaring request cannot read a task that exists either', async () => {
    const taskId = await createTask(url, 'slow_compute', { seconds: 30 });
    const answer = await rpc(url, 'tasks/get', { taskId }, { declare: false });
    expect(answer.error?.code).toBe(-32021);
    await rpc(url, 'tasks/cancel', { taskId });
  });

  it('X-40 subscriptions/listen for taskIds without the extension is -32021 with HTTP 400', async () => {
    const refused = await rpc(url, 'subscriptions/listen', { notifications: { taskIds: ['x'] } }, { declare: false });
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ code: -32021, data: requiredExt });
  });

  it('X-62 a legacy task param on tools/call is ignored, never an opt-in', async () => {
    const answer = await rpc(url, 'tools/call', {
      name: 'greet',
      arguments: { name: 'legacy-hint' },
      task: { ttl: 60000, pollInterval: 100 },
    });
    expect(answer.result.resultType).toBe('complete');
    expect(answer.result.content[0].text).toBe('Hello, legacy-hint!');
  });

  it('X-61 X-68 tasks/result and tasks/list are -32601 with HTTP 404', async () => {
    for (const method of ['tasks/result', 'tasks/list']) {
      const answer = await rpc(url, method, method === 'tasks/result' ? { taskId: 'x' } : {});
      expect(answer.status, method).toBe(404);
      expect(answer.error?.code, method).toBe(-32601);
    }
  });

  it('X-43 an Mcp-Name that disagrees with the body is -32020', async () => {
    const taskId = await createTask(url, 'slow_compute', { seconds: 30 });
    const answer = await rpc(url, 'tasks/get', { taskId }, { headers: { 'mcp-name': 'someone-else' } });
    expect(answer.status).toBe(400);
    expect(answer.error?.code).toBe(-32020);
    await rpc(url, 'tasks/cancel', { taskId });
  });
});

describe('task lifecycle', () => {
  it('X-06 X-09 X-55 the create result is flat and the task is readable at once; ids are 128-bit base64url', async () => {
    const answer = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30 } });
    expect(answer.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: expect.any(Number) });
    expect(answer.result.taskId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const get = await rpc(url, 'tasks/get', { taskId: answer.result.taskId });
    expect(get.result).toMatchObject({ resultType: 'complete', taskId: answer.result.taskId });
    await rpc(url, 'tasks/cancel', { taskId: answer.result.taskId });
  });

  it('X-18 X-51 X-52 X-54 a tool error ends completed with isError in the inlined result', async () => {
    const taskId = await createTask(url, 'failing_job', {});
    const done = await pollUntil(url, taskId, isTerminalStatus);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ isError: true, resultType: 'complete' });
    expect(done).not.toHaveProperty('error');
  });

  it('X-20 X-50 X-53 a JSON-RPC error ends failed with the error and no result', async () => {
    const taskId = await createTask(url, 'protocol_error_job', {});
    const done = await pollUntil(url, taskId, isTerminalStatus);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message: 'simulated internal failure' });
    expect(done.statusMessage).toBeTruthy();
    expect(done).not.toHaveProperty('result');
  });

  it('X-37 X-39 cancel acks empty, the task ends cancelled, and a second cancel on the terminal task acks the same', async () => {
    const taskId = await createTask(url, 'slow_compute', { seconds: 60 });
    const first = await rpc(url, 'tasks/cancel', { taskId });
    expect(first.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    const done = await pollUntil(url, taskId, isTerminalStatus);
    expect(done.status).toBe('cancelled');
    const again = await rpc(url, 'tasks/cancel', { taskId });
    expect(again.error).toBeUndefined();
    expect(again.result.resultType).toBe('complete');
    for (const key of ['taskId', 'status', 'result', 'error', 'inputRequests'])
      expect(again.result).not.toHaveProperty(key);
  });

  it('X-16 X-31 X-34 X-35 updates: unknown keys are acked and ignored; the answer is applied before the ack', async () => {
    const taskId = await createTask(url, 'multi_input', {});
    const parked = await pollUntil(
      url,
      taskId,
      (t) => t.status === 'input_required' && Object.keys(t.inputRequests).length === 2,
    );
    const [first, second] = Object.keys(parked.inputRequests) as [string, string];
    expect(parked.inputRequests[first].method).toBe('elicitation/create');

    const ignored = await rpc(url, 'tasks/update', {
      taskId,
      inputResponses: { 'not-a-key': { action: 'accept', content: {} } },
    });
    expect(ignored.result).toMatchObject({ resultType: 'complete' });
    expect(ignored.result).not.toHaveProperty('status');
    const still = await rpc(url, 'tasks/get', { taskId });
    expect(Object.keys(still.result.inputRequests).sort()).toEqual([first, second].sort());

    await rpc(url, 'tasks/update', {
      taskId,
      inputResponses: { [first]: { action: 'accept', content: { name: 'partial-1', confirm: true } } },
    });
    const partial = await rpc(url, 'tasks/get', { taskId });
    expect(partial.result.status).toBe('input_required');
    expect(Object.keys(partial.result.inputRequests)).toEqual([second]);

    await rpc(url, 'tasks/update', {
      taskId,
      inputResponses: { [second]: { action: 'accept', content: { name: 'partial-2', confirm: true } } },
    });
    const done = await pollUntil(url, taskId, isTerminalStatus);
    expect(done.result.content[0].text).toBe('Answers: partial-1, partial-2');
  });

  it('an unreadable answer to an outstanding elicitation is -32602 and changes nothing', async () => {
    const taskId = await createTask(url, 'confirm_delete', { filename: 'bad-answer.txt' });
    const parked = await pollUntil(url, taskId, (t) => t.status === 'input_required');
    const [key] = Object.keys(parked.inputRequests) as [string];
    const bad = await rpc(url, 'tasks/update', { taskId, inputResponses: { [key]: { ignored: true } } });
    expect(bad.error).toMatchObject({ code: -32602 });
    expect(bad.error?.message).toContain(key);
    const still = await rpc(url, 'tasks/get', { taskId });
    expect(Object.keys(still.result.inputRequests)).toEqual([key]);
    await rpc(url, 'tasks/cancel', { taskId });
  });

  it('X-11 the MRTR round happens before the task exists, then the task uses the answer', async () => {
    const round1 = await rpc(url, 'tools/call', { name: 'test_tool_with_task', arguments: {} });
    expect(round1.result.resultType).toBe('input_required');
    expect(round1.result).not.toHaveProperty('taskId');
    const [key] = Object.keys(round1.result.inputRequests) as [string];
    const round2 = await rpc(url, 'tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: { [key]: { action: 'accept', content: { name: 'Alice' } } },
    });
    expect(round2.result.resultType).toBe('task');
    expect(round2.result).not.toHaveProperty('requestState');
    const done = await pollUntil(url, round2.result.taskId, isTerminalStatus);
    expect(done.result.content[0].text).toBe('Hello, Alice!');
  });

  it('X-44 X-45 S8 unknown and malformed ids get one identical -32602 on get, update and cancel', async () => {
    const errors = [];
    for (const taskId of ['tasks-conformance-nonexistent-12345', 'AAAAAAAAAAAAAAAAAAAAAA', 'x'.repeat(300)]) {
      for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
        const answer = await rpc(url, method, { taskId, inputResponses: {} });
        errors.push(answer.error);
      }
    }
    expect(errors[0]).toMatchObject({ code: -32602 });
    for (const e of errors) expect(e).toEqual(errors[0]);
  });

  it('unknown tools and bad arguments are -32602 with a reason and create nothing', async () => {
    const unknown = await rpc(url, 'tools/call', { name: 'nope', arguments: {} });
    expect(unknown.error).toMatchObject({ code: -32602, data: { reason: 'unknown_tool' } });
    const bad = await rpc(url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 'soon' } });
    expect(bad.error).toMatchObject({ code: -32602, data: { reason: 'invalid_arguments' } });
    expect(bad.error?.message).toContain('seconds');
  });
});
