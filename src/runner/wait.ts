import type { TaskRecord } from '../core/task.js';
import { isTerminal } from '../core/task.js';
import type { Clock } from '../core/ports.js';
import type { TaskEvents } from '../store/events.js';
import type { WaitOptions } from './engine-port.js';
import { Wakeup } from './wakeup.js';

/**
 * The longest a waiter trusts events alone: it re-reads the store at least this often, so a change
 * made by another node (no shared events) is seen within 500 ms.
 */
const REREAD_MS = 500;

/**
 * `waitForChange`: resolves with the task once its `updatedAt` differs from `sinceUpdatedAt` (the
 * first read's when absent) or it is terminal, else with the current task after `timeoutMs`.
 * Rejects like `read` (not_found) and with the signal's reason when `options.signal` aborts.
 */
export async function waitForChange(
  deps: { readonly clock: Clock; readonly events: TaskEvents },
  taskId: string,
  read: () => Promise<TaskRecord>,
  options: WaitOptions,
): Promise<TaskRecord> {
  const { clock, events } = deps;
  const deadline = clock.now() + Math.max(0, options.timeoutMs);
  const wakeup = new Wakeup(clock);
  const done = new AbortController();
  const onAbort = (): void => done.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const unsubscribe = events.subscribe((event) => {
    if (event.taskId === taskId) wakeup.wake();
  });
  try {
    let task = await read();
    const since = options.sinceUpdatedAt ?? task.updatedAt;
    for (;;) {
      options.signal?.throwIfAborted();
      if (isTerminal(task.status) || task.updatedAt !== since) return task;
      const remaining = deadline - clock.now();
      if (remaining <= 0) return task;
      await wakeup.sleep(Math.min(REREAD_MS, remaining), done.signal);
      options.signal?.throwIfAborted();
      task = await read();
    }
  } finally {
    unsubscribe();
    options.signal?.removeEventListener('abort', onAbort);
    done.abort();
  }
}
