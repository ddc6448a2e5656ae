import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock, Ids, Random } from './ports.js';

/**
 * The real implementations of the ports, for production wiring. They live here, beside the ports,
 * and are injected by the CLI and server entry points; library code receives them as parameters.
 * `createEngine` uses them when given no `clock`, `ids` or `random`.
 * @example
 * const engine = createEngine({ store, tools: [report], clock: systemClock, ids: systemIds, random: systemRandom });
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  // Rejects with the signal's own reason, as the port says (node's timers/promises would build an
  // AbortError with a stack per aborted sleep: every run's heartbeat loop ends with one).
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the port: the signal's own reason
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the port: the signal's own reason
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * `Math.random` as the `Random` port (claim-interval jitter).
 * @example
 * createEngine({ store, tools, random: systemRandom });
 */
export const systemRandom: Random = { next: () => Math.random() };

/**
 * Task ids of 128 random bits (base64url, X-55) and `prefix_<uuid>` unique ids. A task id never
 * begins with `-`: one in 64 would, and a command line reads it as an option (`terminus ops show
 * -abc`). Drawing again keeps the ids uniform over the rest (127.98 bits).
 * @example
 * createEngine({ store, tools, ids: systemIds });
 */
export const systemIds: Ids = {
  taskId: () => {
    for (;;) {
      const id = randomBytes(16).toString('base64url');
      if (!id.startsWith('-')) return id;
    }
  },
  unique: (prefix) => `${prefix}_${randomUUID()}`,
};
