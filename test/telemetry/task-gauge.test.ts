import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { taskGauge } from '../../src/telemetry/task-gauge.js';
import { newTask } from '../../src/testing/fixtures.js';

const T0 = 1_800_000_000_000;
let dir: string | undefined;
let store: TaskStore | undefined;
afterEach(async () => {
  await store?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  store = undefined;
  dir = undefined;
});

/** The `terminus_tasks` samples of one scrape, as `tool/status → value`. */
async function scrape(registry: Registry): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'terminus_tasks');
  return Object.fromEntries(
    (metric?.values ?? []).map((v) => [`${String(v.labels['tool'])}/${String(v.labels['status'])}`, v.value]),
  );
}

describe('terminus_tasks gauge', () => {
  it("counts the store's unexpired tasks by tool and status at each scrape, every owner", async () => {
    dir = mkdtempSync(join(tmpdir(), 'terminus-gauge-'));
    const opened = await openSqliteTaskStore({ path: join(dir, 'tasks.db') });
    store = opened;
    let now = T0;
    const registry = new Registry();
    taskGauge({ registry, store: opened, now: () => now, tools: ['report', 'migrate'] });

    // 3 report tasks (alice 2, bob 1), one of alice's cancelled; 1 migrate task asking for input.
    await opened.create(newTask({ tool: 'report' }));
    await opened.create(newTask({ tool: 'report', owner: 'bob' }));
    const cancelled = (await opened.create(newTask({ tool: 'report', ttlMs: 1_000 }))).task;
    await opened.cancel(cancelled.owner, cancelled.id, T0 + 1);
    const migrate = (await opened.create(newTask({ tool: 'migrate' }))).task;
    const [claimed] = await opened.claim({ workerId: 'w', now: T0 + 1, leaseMs: 30_000, limit: 1, tools: ['migrate'] });
    expect(claimed?.id).toBe(migrate.id);
    await opened.requestInput(
      { taskId: migrate.id, workerId: 'w', epoch: 1 },
      'k',
      { method: 'elicitation/create', params: {} },
      T0 + 2,
    );

    now = T0 + 3;
    const zero = (tool: string) => ({
      [`${tool}/working`]: 0,
      [`${tool}/input_required`]: 0,
      [`${tool}/completed`]: 0,
      [`${tool}/failed`]: 0,
      [`${tool}/cancelled`]: 0,
    });
    expect(await scrape(registry)).toEqual({
      ...zero('report'),
      ...zero('migrate'),
      'report/working': 2,
      'report/cancelled': 1,
      'migrate/input_required': 1,
    });
    // Read at scrape time: once the cancelled task has expired (S7) it is no longer counted.
    now = T0 + 10_000_000;
    expect(await scrape(registry)).toEqual({
      ...zero('report'),
      ...zero('migrate'),
      'report/working': 2,
      'migrate/input_required': 1,
    });
    expect(await registry.metrics()).toContain('terminus_tasks{tool="report",status="working"} 2');
  });
});
