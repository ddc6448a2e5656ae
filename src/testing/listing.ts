import { expect } from 'vitest';
import type { TaskRecord } from '../core/task.js';
import type { ListQuery, TaskStore } from '../store/port.js';
import type { SuiteContext } from './context.js';
import { created, OWNER, rejectsWith, T0 } from './fixtures.js';

async function allPages(store: TaskStore, query: Omit<ListQuery, 'cursor'>, now: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard += 1) {
    const page = await store.list(OWNER, cursor === undefined ? query : { ...query, cursor }, now);
    pages.push(page.tasks.map((t) => t.id));
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
  throw new Error('list never ended');
}

/** Newest first by (createdAt, id); several tasks share a createdAt to exercise the tie-break. */
async function seed(store: TaskStore, count: number): Promise<TaskRecord[]> {
  const tasks: TaskRecord[] = [];
  for (let i = 0; i < count; i += 1) tasks.push(await created(store, { now: T0 + Math.floor(i / 3) }));
  return tasks.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
}

/** Cursor pagination, newest first. */
export function listingCases({ store, test }: SuiteContext): void {
  test('list: pages by limit and cursor, newest first, without duplicates or gaps', async () => {
    const expected = (await seed(store(), 23)).map((t) => t.id);
    const pages = await allPages(store(), { limit: 5 }, T0 + 100);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat()).toEqual(expected);
  });

  test('list: the order is stable when tasks are created between pages', async () => {
    const expected = (await seed(store(), 12)).map((t) => t.id);
    const first = await store().list(OWNER, { limit: 4 }, T0 + 100);
    for (let i = 0; i < 3; i += 1) await created(store(), { now: T0 + 50 });
    const seen = [...first.tasks.map((t) => t.id)];
    let cursor = first.nextCursor;
    while (cursor !== null) {
      const page = await store().list(OWNER, { limit: 4, cursor }, T0 + 100);
      seen.push(...page.tasks.map((t) => t.id));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(expected);
  });

  test('list: a page exactly at the end says there is no next cursor', async () => {
    await seed(store(), 4);
    const page = await store().list(OWNER, { limit: 4 }, T0 + 100);
    expect(page.tasks).toHaveLength(4);
    expect(page.nextCursor).toBeNull();
    expect((await store().list(OWNER, { limit: 10 }, T0)).nextCursor).toBeNull();
  });

  test('list: status and wire filters apply across pages', async () => {
    const tasks = await seed(store(), 10);
    const cancelled = new Set<string>();
    for (const [i, task] of tasks.entries()) {
      if (i % 3 === 0) {
        await store().cancel(OWNER, task.id, T0 + 10);
        cancelled.add(task.id);
      }
    }
    const expected = tasks.map((t) => t.id).filter((id) => cancelled.has(id));
    const pages = await allPages(store(), { limit: 2, status: ['cancelled'] }, T0 + 10);
    expect(pages.flat()).toEqual(expected);
    const working = await allPages(store(), { limit: 3, status: ['working', 'input_required'] }, T0 + 10);
    expect(working.flat()).toEqual(tasks.map((t) => t.id).filter((id) => !cancelled.has(id)));
    const sep = await created(store(), { wire: 'sep-1391', now: T0 + 20 });
    expect((await allPages(store(), { limit: 2, wire: 'sep-1391' }, T0 + 20)).flat()).toEqual([sep.id]);
  });

  test('list: limit is clamped to 1..1000', async () => {
    await seed(store(), 3);
    expect((await store().list(OWNER, { limit: 0 }, T0 + 10)).tasks).toHaveLength(1);
    expect((await store().list(OWNER, { limit: 5_000 }, T0 + 10)).tasks).toHaveLength(3);
  });

  test('list: a malformed cursor rejects invalid_argument', async () => {
    await seed(store(), 3);
    await rejectsWith(store().list(OWNER, { limit: 2, cursor: 'not a cursor!' }, T0), 'invalid_argument');
  });
}
