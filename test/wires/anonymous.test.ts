import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { keyBits } from '../../src/server/anonymous.js';
import { rpc } from '../server/helpers.js';
import { ALICE, aip, LegacySession, startWireServer, type WireServer } from './helpers.js';

/**
 * Issue 12 item 1 (DESIGN.md "The edges", X-55, T-75, T-77): an anonymous caller holds capabilities,
 * never a namespace. A second anonymous caller can neither list, nor guess a key, nor burn one, on
 * any session-less wire: the Tasks extension, AIP-151 and SEP-1391 on the stateless 2025 leg.
 */
let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

const strongKey = (): string => randomBytes(16).toString('base64url');
const KEY_META = 'mcp-terminus.dev/submissionKey';
/** What every guessable key is refused with, on every wire. */
const WEAK = ['job-1', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '1234567890', 'job-1job-1job-1job-1job-1job-1'];

/** The raw engine (below the policy): proves a key was not burned by creating under it. */
async function notBurned(key: string): Promise<void> {
  const { created } = await server.engine.submit({
    owner: 'anonymous',
    tool: 'work',
    args: { text: 'owner' },
    wire: 'mcp-tasks-ext',
    submissionKey: key,
  });
  expect(created).toBe(true);
}

test('keyBits credits a key by its form: 16 random bytes pass, short or repetitive keys do not', () => {
  expect(keyBits(strongKey())).toBeGreaterThanOrEqual(128); // 22 base64url characters: 132
  expect(keyBits(randomBytes(16).toString('hex'))).toBe(128);
  expect(keyBits(crypto.randomUUID())).toBe(128); // hyphens count nothing: 32 hex digits
  for (const key of WEAK) expect(keyBits(key)).toBeLessThan(128);
});

describe('Tasks extension (2026-07-28, stateless)', () => {
  test('a guessable key is refused with -32602 before anything is stored; a strong one works', async () => {
    for (const key of WEAK) {
      const answer = await rpc(
        server.url,
        'tools/call',
        { name: 'work', arguments: {} },
        { meta: { [KEY_META]: key } },
      );
      expect(answer.error?.code).toBe(-32602);
      expect(answer.error?.data).toMatchObject({ reason: 'submission_key_too_weak', minBits: 128 });
    }
    const key = strongKey();
    const first = await rpc(server.url, 'tools/call', { name: 'work', arguments: {} }, { meta: { [KEY_META]: key } });
    expect(first.result?.resultType).toBe('task');
    const again = await rpc(server.url, 'tools/call', { name: 'work', arguments: {} }, { meta: { [KEY_META]: key } });
    expect(again.result?.taskId).toBe(first.result?.taskId);
  });

  test('a second anonymous caller cannot reveal or burn a key by looking it up', async () => {
    const answer = await rpc(server.url, 'terminus/tasks/lookup', { submissionKey: 'job-2' });
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.data).toMatchObject({ reason: 'submission_key_too_weak' });
    await notBurned('job-2');
  });

  test('an authenticated caller keeps any key: its keys are its own', async () => {
    const answer = await rpc(
      server.url,
      'tools/call',
      { name: 'work', arguments: {} },
      { token: ALICE, meta: { [KEY_META]: 'job-1' } },
    );
    expect(answer.result?.resultType).toBe('task');
  });
});

describe('AIP-151', () => {
  test('nothing lists anonymous tasks, whichever wire created them; an authenticated caller lists its own', async () => {
    const viaAip = await aip(server.base, 'POST', '/v1/tools/work:run', undefined, { arguments: {} });
    expect(viaAip.status).toBe(200);
    await rpc(server.url, 'tools/call', { name: 'work', arguments: {} });
    expect((await server.engine.list('anonymous', { limit: 100 })).tasks.length).toBeGreaterThan(1);

    const listed = await aip(server.base, 'GET', '/v1/operations', undefined);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ operations: [], nextPageToken: '' });
    const filtered = await aip(server.base, 'GET', '/v1/operations?filter=done%20%3D%20true', undefined);
    expect(filtered.body.operations).toEqual([]);

    await aip(server.base, 'POST', '/v1/tools/work:run', ALICE, { arguments: {} });
    const mine = await aip(server.base, 'GET', '/v1/operations', ALICE);
    expect(mine.body.operations.length).toBeGreaterThan(0);
    // The listed id is still a capability: the anonymous creator reads its operation by name.
    const got = await aip(server.base, 'GET', `/v1/${viaAip.body.name as string}`, undefined);
    expect(got.status).toBe(200);
  });

  test('S8 a junk or forged page_token is 400 INVALID_ARGUMENT for an anonymous caller too, and says nothing', async () => {
    // A real position: the cursor an authenticated caller would get after an anonymous task.
    await aip(server.base, 'POST', '/v1/tools/work:run', undefined, { arguments: {} });
    const task = (await server.engine.list('anonymous', { limit: 1 })).tasks[0];
    if (task === undefined) throw new Error('no anonymous task');
    const forged = Buffer.from(JSON.stringify([task.createdAt, task.id])).toString('base64url');
    const unknown = Buffer.from(JSON.stringify([1, 'no-such-task'])).toString('base64url');
    const answers = [];
    for (const token of ['garbage', forged, unknown]) {
      for (const caller of [undefined, ALICE]) {
        if (caller === ALICE && token !== 'garbage') continue; // a position is no secret to its own owner
        const answer = await aip(server.base, 'GET', `/v1/operations?page_token=${token}`, caller);
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({ status: 'INVALID_ARGUMENT', message: 'invalid page_token' });
        answers.push(answer.body);
      }
    }
    // The same answer whether the token names a task or not, and the same as an authenticated caller's.
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
  });

  test('a guessable requestId is 400 INVALID_ARGUMENT and nothing is stored', async () => {
    const before = (await server.engine.list('anonymous', { limit: 1000 })).tasks.length;
    const refused = await aip(server.base, 'POST', '/v1/tools/work:run', undefined, {
      arguments: {},
      requestId: 'job-3',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ status: 'INVALID_ARGUMENT' });
    expect(refused.body.error.details[0].reason).toBe('REQUEST_ID_TOO_WEAK');
    expect((await server.engine.list('anonymous', { limit: 1000 })).tasks.length).toBe(before);
    await notBurned('job-3');
    const requestId = crypto.randomUUID().replaceAll('-', '') + 'ab'; // 34 hex digits
    const ok = await aip(server.base, 'POST', '/v1/tools/work:run', undefined, { arguments: {}, requestId });
    expect(ok.status).toBe(200);
  });
});

describe('SEP-1391 and 2025-11-25 on the stateless leg', () => {
  test('a guessable operation.token is refused; a status query cannot burn or reveal one', async () => {
    const anon = new LegacySession(server.url, undefined);
    const call = await anon.request('tools/call', { name: 'work', arguments: {}, operation: { token: 'job-4' } });
    expect(call.error?.code).toBe(-32602);
    expect(call.error?.data).toMatchObject({ reason: 'token_too_weak' });
    const status = await anon.request('tools/async/status', { token: 'job-5' });
    expect(status.error?.code).toBe(-32602);
    expect(status.error?.data).toMatchObject({ reason: 'token_too_weak' });
    await notBurned('job-5');
    const token = strongKey();
    const created = await anon.request('tools/call', { name: 'work', arguments: {}, operation: { token } });
    expect(created.error).toBeUndefined();
    const other = new LegacySession(server.url, undefined);
    const seen = await other.request('tools/async/status', { token });
    expect(seen.error).toBeUndefined(); // the token is the capability: whoever holds it reads
  });

  test('tasks/list is refused to an anonymous caller (T-77)', async () => {
    const anon = new LegacySession(server.url, undefined);
    const listed = await anon.request('tasks/list', {});
    expect(listed.error?.code).toBe(-32601);
  });
});
