import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { systemClock } from '../../src/core/system.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { engineFor, OWNER, text } from './helpers.js';

/** Issue 12 item 5: what is stored is what the schema accepted, and arguments have a size bound. */
let dir: string;
let path: string;
let store: TaskStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-args-'));
  path = join(dir, 'tasks.db');
  store = await openSqliteTaskStore({ path });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const seen: unknown[] = [];
const report = defineTaskTool({
  name: 'report',
  description: 'test',
  inputSchema: z.object({ title: z.string(), pages: z.number().int().default(3) }),
  handler: async (args) => (seen.push(args), text('ok')),
});

describe('stored arguments (issue 12 item 5, SQLite)', () => {
  test('unknown fields are not stored: the task keeps the parsed arguments, defaults applied', async () => {
    const engine = engineFor(store, [report]);
    const junk = 'JUNK-MARKER-'.repeat(20_000); // 240 KB
    const { task } = await engine.submit({
      owner: OWNER,
      tool: 'report',
      args: { title: 't', junk },
      wire: 'mcp-tasks-ext',
    });
    expect(task.args).toEqual({ title: 't', pages: 3 });
    expect((await store.get(OWNER, task.id, systemClock.now()))?.args).toEqual({ title: 't', pages: 3 });
    await store.close();
    // Not in the database file nor its WAL: the junk was never written.
    const bytes = [path, `${path}-wal`].map((file) => {
      try {
        return readFileSync(file).toString('latin1');
      } catch {
        return '';
      }
    });
    expect(bytes.some((b) => b.includes('JUNK-MARKER-'))).toBe(false);
    store = await openSqliteTaskStore({ path });
  });

  test('S5: the digest covers the arguments as sent: a retry is the same task, a changed stripped field a conflict', async () => {
    const engine = engineFor(store, [report]);
    const args = { title: 't', extra: 1 };
    const first = await engine.submit({
      owner: OWNER,
      tool: 'report',
      args,
      wire: 'mcp-tasks-ext',
      submissionKey: 'k',
    });
    const retry = await engine.submit({
      owner: OWNER,
      tool: 'report',
      args: { extra: 1, title: 't' },
      wire: 'mcp-tasks-ext',
      submissionKey: 'k',
    });
    expect(retry).toMatchObject({ created: false, task: { id: first.task.id } });
    await expect(
      engine.submit({
        owner: OWNER,
        tool: 'report',
        args: { title: 't', extra: 2 },
        wire: 'mcp-tasks-ext',
        submissionKey: 'k',
      }),
    ).rejects.toMatchObject({ code: 'submission_key_conflict' });
  });

  test('arguments over maxArgumentBytes are refused with the limit named, and nothing is stored', async () => {
    const engine = engineFor(store, [report], { maxArgumentBytes: 1000 });
    const big = { title: 'x'.repeat(1000) };
    for (const submit of [
      () => engine.submit({ owner: OWNER, tool: 'report', args: big, wire: 'mcp-tasks-ext' }),
      () => engine.runInline({ tool: 'report', args: big, signal: new AbortController().signal }),
    ]) {
      const error = await submit().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'invalid_argument', details: { field: 'arguments', limit: 1000 } });
      expect((error as Error).message).toMatch(/limit is 1000 \(maxArgumentBytes\)/);
    }
    expect((await store.list(OWNER, { limit: 10 }, systemClock.now())).tasks).toHaveLength(0);
    // Just under the bound is fine, and the default bound (1 MiB) lets ordinary calls through.
    await engine.submit({ owner: OWNER, tool: 'report', args: { title: 'x'.repeat(900) }, wire: 'mcp-tasks-ext' });
    const roomy = engineFor(store, [report]);
    await roomy.submit({ owner: OWNER, tool: 'report', args: { title: 'x'.repeat(500_000) }, wire: 'mcp-tasks-ext' });
  });
});
