import type { TaskStore } from '../store/port.js';

/**
 * The same store, timing every call: `record(operation, seconds, ok)` after each one settles. Each
 * write of the port resolves only after its durable commit (S1), so a write's time is its commit
 * latency as the engine sees it (group commit batching included). `close` is not timed.
 * @example
 * const metrics = createMetrics();
 * const timed = timedStore(store, (operation, seconds, ok) => metrics.storeCall(operation, seconds, ok));
 * const engine = createEngine({ store: timed, tools, clock, ids });
 */
export function timedStore(
  store: TaskStore,
  record: (operation: string, seconds: number, ok: boolean) => void,
  now: () => number = () => performance.now(),
): TaskStore {
  // A Proxy rather than a hand-written wrapper: methods other branches add to the port are timed too.
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        const started = now();
        const settled = (ok: boolean): void => record(property, (now() - started) / 1000, ok);
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) {
          return result.then(
            (answer: unknown) => {
              settled(true);
              return answer;
            },
            (error: unknown) => {
              settled(false);
              throw error;
            },
          );
        }
        return result;
      };
    },
  });
}
