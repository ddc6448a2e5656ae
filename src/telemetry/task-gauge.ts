import { Gauge, type Registry } from 'prom-client';
import { TASK_STATUSES } from '../core/task.js';
import type { TaskStore } from '../store/port.js';

/** Where the tasks-by-status gauge reads from. */
export interface TaskGaugeOptions {
  readonly registry: Registry;
  readonly store: Pick<TaskStore, 'countByStatus'>;
  /** The clock the engine uses: expired tasks (S7) are not counted. */
  readonly now: () => number;
  /** Tools whose every status is exported, at 0 when none: a series does not vanish when its last task leaves. */
  readonly tools?: readonly string[];
}

/**
 * `terminus_tasks{tool,status}`: unexpired tasks in the store by tool and status, every owner and
 * every node, read with one `countByStatus` query at each scrape (prom-client `collect`), so it is
 * the store's truth rather than what this node saw. When that read fails the gauge has no samples
 * in that scrape and the other metrics are still served (`/readyz` names the store failure).
 * @example
 * const metrics = createMetrics();
 * taskGauge({ registry: metrics.registry, store, now: () => clock.now(), tools: tools.map((t) => t.name) });
 */
export function taskGauge(options: TaskGaugeOptions): Gauge {
  return new Gauge({
    name: 'terminus_tasks',
    help: 'Unexpired tasks in the store by tool and status (all owners, all nodes), read at scrape',
    labelNames: ['tool', 'status'],
    registers: [options.registry],
    async collect() {
      this.reset();
      let counts;
      try {
        counts = await options.store.countByStatus(options.now());
      } catch {
        return;
      }
      for (const tool of options.tools ?? []) for (const status of TASK_STATUSES) this.set({ tool, status }, 0);
      for (const { tool, status, count } of counts) this.set({ tool, status }, count);
    },
  });
}
