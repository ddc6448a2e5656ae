import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ALICE, BOB, aip, eventually, startWireServer, type WireServer } from './helpers.js';

/** AIP-151 operations over HTTP/JSON on the same port as /mcp. */
let server: WireServer;

beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

const run = (args: Record<string, unknown>, requestId?: string, token = ALICE) =>
  aip(server.base, 'POST', '/v1/tools/work:run', token, {
    arguments: args,
    ...(requestId === undefined ? {} : { requestId }),
  });

describe('AIP-151 operations', () => {
  test('G-19 G-20 G-21: submit returns an operation; done=false has neither error nor response; done=true has the response', async () => {
    const submitted = await run({ mode: 'block', key: 'aip-1' });
    expect(submitted.status).toBe(200);
    const op = submitted.body;
    expect(op.name).toMatch(/^operations\/[A-Za-z0-9_-]+$/);
    expect(op.done).toBe(false);
    expect(op.error).toBeUndefined();
    expect(op.response).toBeUndefined();
    expect(op.metadata).toMatchObject({ tool: 'work', wire: 'aip-151', status: 'working', pollInterval: '0.05s' });
    server.gates.release('aip-1');
    const done = await eventually(
      () => aip(server.base, 'GET', `/v1/${op.name}`, ALICE),
      (r) => r.body.done === true,
    );
    expect(done.body.error).toBeUndefined();
    expect(done.body.response).toMatchObject({
      content: [{ type: 'text', text: 'done' }],
      structuredContent: { ok: true },
    });
    expect(done.body.response['@type']).toMatch(/CallToolResult$/);
  });

  test('G-24 G-25: cancel answers {} and the operation ends done with error.code 1 (CANCELLED)', async () => {
    const op = (await run({ mode: 'block', key: 'aip-c' })).body;
    const cancel = await aip(server.base, 'POST', `/v1/${op.name}:cancel`, ALICE);
    expect(cancel).toEqual({ status: 200, body: {} });
    server.gates.release('aip-c');
    const got = await aip(server.base, 'GET', `/v1/${op.name}`, ALICE);
    expect(got.body.done).toBe(true);
    expect(got.body.error.code).toBe(1);
    expect(got.body.response).toBeUndefined();
    // Cancel of a done operation is best effort: {} again, and nothing changes (S2).
    expect((await aip(server.base, 'POST', `/v1/${op.name}:cancel`, ALICE)).status).toBe(200);
    expect((await aip(server.base, 'GET', `/v1/${op.name}`, ALICE)).body.error.code).toBe(1);
  });

  test('G-17 G-20: a failed task is done with a google.rpc.Status error carrying the JSON-RPC error', async () => {
    const op = (await run({ mode: 'rpc_error' })).body;
    const done = await eventually(
      () => aip(server.base, 'GET', `/v1/${op.name}`, ALICE),
      (r) => r.body.done === true,
    );
    expect(done.body.error).toMatchObject({ code: 2, message: 'backend refused' });
    expect(done.body.error.details[0]).toMatchObject({ code: -32010, data: { backend: 'x' } });
  });

  test('G-27: :wait returns at once when done and after the timeout when not', async () => {
    const op = (await run({ mode: 'block', key: 'aip-w' })).body;
    const timedOut = await aip(server.base, 'POST', `/v1/${op.name}:wait`, ALICE, { timeout: '0.2s' });
    expect(timedOut.status).toBe(200);
    expect(timedOut.body.done).toBe(false);
    const waiting = aip(server.base, 'POST', `/v1/${op.name}:wait`, ALICE, { timeout: '30s' });
    server.gates.release('aip-w');
    const done = await waiting;
    expect(done.body.done).toBe(true);
    const bad = await aip(server.base, 'POST', `/v1/${op.name}:wait`, ALICE, { timeout: 30 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.status).toBe('INVALID_ARGUMENT');
  });

  test('G-16 S8: not found, foreign and malformed names are 404 NOT_FOUND in the google.rpc.Status shape', async () => {
    const op = (await run({})).body;
    for (const [path, token] of [
      [`/v1/${op.name}`, BOB],
      ['/v1/operations/nope', ALICE],
      [`/v1/operations/${'x'.repeat(300)}`, ALICE],
    ] as const) {
      const answer = await aip(server.base, 'GET', path, token);
      expect(answer.status, path).toBe(404);
      expect(answer.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND', message: 'Operation not found' });
    }
    expect((await aip(server.base, 'POST', `/v1/${op.name}:cancel`, BOB)).status).toBe(404);
    expect((await aip(server.base, 'POST', '/v1/tools/nope:run', ALICE, {})).status).toBe(404);
    expect((await aip(server.base, 'POST', '/v1/tools/work:run', ALICE, { arguments: { mode: 'x' } })).status).toBe(
      400,
    );
  });

  test('AIP-155: requestId makes the submission idempotent; reuse for another request is 409 ALREADY_EXISTS', async () => {
    const first = await run({ text: 'same' }, 'req-1');
    const again = await run({ text: 'same' }, 'req-1');
    expect(again.body.name).toBe(first.body.name);
    const other = await run({ text: 'other' }, 'req-1');
    expect(other.status).toBe(409);
    expect(other.body.error.status).toBe('ALREADY_EXISTS');
    // Same requestId under another principal is another operation (keys are per owner).
    const bobs = await run({ text: 'same' }, 'req-1', BOB);
    expect(bobs.body.name).not.toBe(first.body.name);
  });

  test('ListOperations: owner-scoped, filter on done/status/wire, page_size and page_token; bad token is 400', async () => {
    const names: string[] = [];
    for (let i = 0; i < 5; i++) names.push((await run({ text: `l${i}` }, undefined, BOB)).body.name as string);
    await eventually(
      () => aip(server.base, 'GET', '/v1/operations?filter=done%20%3D%20false', BOB),
      (r) => r.body.operations.length === 0,
    );
    const firstPage = await aip(server.base, 'GET', '/v1/operations?page_size=3', BOB);
    expect(firstPage.body.operations).toHaveLength(3);
    expect(firstPage.body.nextPageToken).not.toBe('');
    const secondPage = await aip(
      server.base,
      'GET',
      `/v1/operations?pageSize=3&pageToken=${encodeURIComponent(firstPage.body.nextPageToken as string)}`,
      BOB,
    );
    const listed = [...firstPage.body.operations, ...secondPage.body.operations].map((o: { name: string }) => o.name);
    expect(listed.filter((n) => names.includes(n))).toHaveLength(5);
    const filtered = await aip(
      server.base,
      'GET',
      `/v1/operations?filter=${encodeURIComponent('done = true AND metadata.wire = "aip-151"')}`,
      BOB,
    );
    expect(
      filtered.body.operations.every(
        (o: { done: boolean; metadata: { wire: string } }) => o.done && o.metadata.wire === 'aip-151',
      ),
    ).toBe(true);
    const aliceList = await aip(server.base, 'GET', '/v1/operations?page_size=1000', ALICE);
    expect(aliceList.body.operations.map((o: { name: string }) => o.name)).not.toContain(names[0]);
    expect((await aip(server.base, 'GET', '/v1/operations?page_token=garbage', BOB)).status).toBe(400);
    const badFilter = await aip(server.base, 'GET', '/v1/operations?filter=metadata.tool%3D%22x%22', BOB);
    expect(badFilter.status).toBe(400);
  });

  test('G-26: DELETE answers {} and does not cancel the operation', async () => {
    const op = (await run({ mode: 'block', key: 'aip-d' })).body;
    expect(await aip(server.base, 'DELETE', `/v1/${op.name}`, ALICE)).toEqual({ status: 200, body: {} });
    const after = await aip(server.base, 'GET', `/v1/${op.name}`, ALICE);
    expect(after.body.metadata.status).toBe('working');
    server.gates.release('aip-d');
  });

  test('authentication: a rejected token is 401 before any route runs', async () => {
    const answer = await fetch(`${server.base}/v1/operations`, { headers: { authorization: 'Bearer wrong' } });
    expect(answer.status).toBe(401);
    await answer.text();
  });
});
