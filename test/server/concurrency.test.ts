import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { rpc, startServer, type TestServer } from './helpers.js';

/** 1,000 `tools/call` at once against the SQLite store: 1,000 distinct, durable, readable tasks. */
let server: TestServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-concurrency-'));
  server = await startServer({ store: await openSqliteTaskStore({ path: join(dir, 'tasks.db') }) });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('concurrency', () => {
  it('X-09 X-55 1,000 tasks created in parallel get 1,000 distinct ids, each readable right after its create', async () => {
    const N = 1000;
    const creates = await inFlight(N, (i) =>
      rpc(server.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: `n${i}` } }),
    );
    const failures = creates.filter((a) => a.result?.resultType !== 'task');
    expect(failures).toEqual([]);
    const ids = new Set(creates.map((a) => a.result.taskId as string));
    expect(ids.size).toBe(N);

    const list = [...ids];
    const reads = await inFlight(N, (i) => rpc(server.url, 'tasks/get', { taskId: list[i] }));
    expect(reads.filter((r) => r.error !== undefined)).toEqual([]);

    let stored = 0;
    let cursor: string | undefined;
    do {
      const page = await server.store.list('anonymous', { limit: 500, ...(cursor ? { cursor } : {}) }, Date.now());
      stored += page.tasks.filter((t) => ids.has(t.id)).length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(stored).toBe(N);
  }, 120_000);
});

/**
 * Runs `count` requests with at most 100 in flight. One socket per request: 1,000 connects at the
 * same instant time out on a loaded 2-core machine before the server sees them (seen in CI runs),
 * which tests the kernel's accept queue, not the store. 100 at once still fills every group commit.
 */
async function inFlight<T>(count: number, send: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      out[i] = await send(i);
    }
  };
  await Promise.all(Array.from({ length: 100 }, lane));
  return out;
}
