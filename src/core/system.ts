import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock, Ids, Random } from './ports.js';

/**
 * The real implementations of the ports, for production wiring. They live here, beside the ports,
 * and are injected by the CLI and server entry points; library code receives them as parameters.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    await delay(ms, undefined, signal === undefined ? undefined : { signal });
  },
};

export const systemRandom: Random = { next: () => Math.random() };

export const systemIds: Ids = {
  taskId: () => randomBytes(16).toString('base64url'),
  unique: (prefix) => `${prefix}_${randomUUID()}`,
};
