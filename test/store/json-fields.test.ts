import { afterAll, describe, expect, it, vi } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { TerminusError } from '../../src/core/errors.js';
import { EAGER_JSON_CHARS, setJsonField } from '../../src/store/json-fields.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../cli/helpers.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

// A task's arguments, checkpoint and result can be megabytes; a status poll must not parse them on
// every read (a task with 1.5 MB of arguments cost 7 ms per `get` on SQLite when every read parsed
// them). Large stored values are parsed on first access and kept; small ones at once, as before.

/** True while the property is still to be parsed (a getter), false once it holds a value. */
function isAccessor(record: unknown, field: string): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(record, field);
  return descriptor !== undefined && 'get' in descriptor && descriptor.get !== undefined;
}

describe('setJsonField', () => {
  const big = { text: 'x'.repeat(EAGER_JSON_CHARS), list: [1, 2, 3] };

  it('parses short text at once, into a plain data property', () => {
    const record = { args: {} as unknown };
    setJsonField(record, 'args', '{"a":1}', 't1');
    expect(Object.getOwnPropertyDescriptor(record, 'args')).toMatchObject({ value: { a: 1 }, writable: true });
    setJsonField(record, 'args', null, 't1');
    expect(record.args).toBeNull();
  });

  it('parses long text on first read only, keeps the value, and reads as an own enumerable property', () => {
    const record = { id: 't1', result: null as unknown };
    const parse = vi.spyOn(JSON, 'parse');
    try {
      setJsonField(record, 'result', JSON.stringify(big), 't1');
      expect(parse).not.toHaveBeenCalled();
      expect(isAccessor(record, 'result')).toBe(true);
      const first = record.result;
      expect(first).toEqual(big);
      expect(record.result).toBe(first);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
    expect(Object.keys(record)).toEqual(['id', 'result']);
    expect({ ...record }.result).toEqual(big);
    expect(JSON.parse(JSON.stringify(record))).toEqual({ id: 't1', result: big });
    expect(structuredClone(record)).toEqual({ id: 't1', result: big });
  });

  it('a spread or a clone of an unread record carries the value; an assignment replaces it', () => {
    const a = { checkpoint: null as unknown };
    setJsonField(a, 'checkpoint', JSON.stringify(big), 't1');
    expect({ ...a }).toEqual({ checkpoint: big });
    const b = { checkpoint: null as unknown };
    setJsonField(b, 'checkpoint', JSON.stringify(big), 't1');
    b.checkpoint = { step: 2 };
    expect(b.checkpoint).toEqual({ step: 2 });
  });

  it('damaged stored text fails on read with an error naming the task and the field', () => {
    const record = { args: {} as unknown };
    setJsonField(record, 'args', `{"broken": "${'x'.repeat(EAGER_JSON_CHARS)}`, 't9');
    expect(() => record.args).toThrow(TerminusError);
    expect(() => record.args).toThrow('the stored args of task t9 is not valid JSON');
  });
});

/** A task with large arguments, a large checkpoint and a large result, and one with small ones. */
function storeCases(name: string, open: () => Promise<TaskStore>, close: () => Promise<void>): void {
  describe(`${name}: a read leaves large values unparsed until used`, () => {
    afterAll(close);
    const big = (label: string) => ({ label, text: 'y'.repeat(200_000), rows: [{ a: 1 }, { b: [2, 3] }] });

    it('get and list hand back args, checkpoint and result unparsed when large, equal when read', async () => {
      const store = await open();
      try {
        const now = Date.now();
        const create = (id: string, args: Record<string, unknown>) =>
          store.create({
            id,
            owner: 'o',
            tool: 'work',
            args,
            requestDigest: requestDigest('work', args),
            submissionKey: null,
            wire: 'mcp-2025-11-25',
            ttlMs: 3_600_000,
            keepAliveMs: null,
            pollIntervalMs: 1000,
            now,
          });
        await create('small', { n: 1 });
        await create('large', big('args'));
        const claimed = await store.claim({ workerId: 'w', now, leaseMs: 60_000, limit: 2, tools: ['work'] });
        const small = claimed.find((t) => t.id === 'small')!;
        const large = claimed.find((t) => t.id === 'large')!;
        expect(large.args).toEqual(big('args'));
        const fence = { taskId: 'small', workerId: 'w', epoch: small.epoch };
        const largeFence = { taskId: 'large', workerId: 'w', epoch: large.epoch };
        await store.checkpoint(largeFence, big('checkpoint'), now);
        await store.finish(
          largeFence,
          { status: 'completed', result: { content: [big('result')] }, resultDigest: 'd' },
          now,
        );
        await store.finish(fence, { status: 'completed', result: { content: [] }, resultDigest: 'd' }, now);

        const read = await store.get('o', 'large', now);
        const listed = (await store.list('o', { limit: 10 }, now)).tasks.find((t) => t.id === 'large');
        for (const task of [read, listed]) {
          for (const field of ['args', 'checkpoint', 'result'] as const) {
            expect(isAccessor(task, field), field).toBe(true);
          }
        }
        expect(read!.status).toBe('completed');
        expect(read!.args).toEqual(big('args'));
        expect(read!.checkpoint).toEqual(big('checkpoint'));
        expect(read!.result).toEqual({ content: [big('result')] });
        expect(listed).toEqual(read);

        const smallRead = await store.get('o', 'small', now);
        expect(Object.getOwnPropertyDescriptor(smallRead, 'args')).toMatchObject({ value: { n: 1 } });
        expect(smallRead!.result).toEqual({ content: [] });
      } finally {
        await store.close();
      }
    }, 60_000);
  });
}

const dir = tempDir('terminus-json-fields-');
storeCases(
  'SQLite',
  () => openSqliteTaskStore({ path: `${dir.path}/tasks.db` }),
  async () => dir.remove(),
);

if (PG_URL === '') {
  describe('PostgreSQL: a read leaves large values unparsed until used', failWithoutDatabase);
} else {
  const admin = adminPool();
  const schema = freshSchema('jsonfields');
  storeCases(
    'PostgreSQL',
    () => openStore(schema),
    async () => {
      await dropSchema(admin, schema);
      await admin.end();
    },
  );
}
