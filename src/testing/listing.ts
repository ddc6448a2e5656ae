import { expect } from 'vitest';
import type { TaskRecord } from '../core/task.js';
import type { ListQuery, TaskStore } from '../store/port.js';
import type { SuiteContext } from './context.js';
import { created, OWNER, rejectsWith, STRANGER, T0 } from './fixtures.js';

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

  test("listAllOwners: every owner's unexpired tasks, newest first, paged and filtered like list", async () => {
    const a1 = await created(store(), { now: T0 });
    const b1 = await created(store(), { owner: STRANGER, now: T0 + 1 });
    const a2 = await created(store(), { now: T0 + 2, wire: 'sep-1391' });
    const b2 = await created(store(), { owner: STRANGER, now: T0 + 3, ttlMs: 1_000 });
    await store().cancel(STRANGER, b2.id, T0 + 4);
    const first = await store().listAllOwners({ limit: 3 }, T0 + 10);
    expect(first.tasks.map((t) => t.id)).toEqual([b2.id, a2.id, b1.id]);
    const rest = await store().listAllOwners({ limit: 3, cursor: first.nextCursor ?? '' }, T0 + 10);
    expect(rest.tasks.map((t) => t.id)).toEqual([a1.id]);
    expect(rest.nextCursor).toBeNull();
    expect((await store().listAllOwners({ limit: 10, status: ['cancelled'] }, T0 + 10)).tasks.map((t) => t.id)).toEqual(
      [b2.id],
    );
    expect((await store().listAllOwners({ limit: 10, wire: 'sep-1391' }, T0 + 10)).tasks.map((t) => t.id)).toEqual([
      a2.id,
    ]);
    // The cancelled task expires (its TTL and the terminal grace both passed); the others are working.
    const later = await store().listAllOwners({ limit: 10 }, T0 + 10_000_000);
    expect(later.tasks.map((t) => t.id)).toEqual([a2.id, b1.id, a1.id]);
    // The owner's own list is unchanged by the other owner's tasks (S8).
    expect((await store().list(OWNER, { limit: 10 }, T0 + 10)).tasks.map((t) => t.id)).toEqual([a2.id, a1.id]);
  });

  test('countByStatus: unexpired tasks of every owner by tool and status', async () => {
    expect(await store().countByStatus(T0)).toEqual([]);
    await created(store(), { tool: 'report' });
    await created(store(), { tool: 'report', owner: STRANGER });
    const c = await created(store(), { tool: 'report' });
    await store().cancel(OWNER, c.id, T0 + 1);
    const e = await created(store(), { tool: 'export', ttlMs: 1_000 });
    await store().cancel(OWNER, e.id, T0 + 1);
    const byKey = (counts: readonly { tool: string; status: string; count: number }[]): Record<string, number> =>
      Object.fromEntries(counts.map((n) => [`${n.tool}/${n.status}`, n.count]));
    expect(byKey(await store().countByStatus(T0 + 2))).toEqual({
      'report/working': 2,
      'report/cancelled': 1,
      'export/cancelled': 1,
    });
    // Expired tasks are not counted (their TTL and the terminal grace passed); working ones never expire (S7).
    expect(byKey(await store().countByStatus(T0 + 10_000_000))).toEqual({ 'report/working': 2 });
  });
}
