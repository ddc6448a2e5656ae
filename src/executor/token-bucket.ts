/**
 * The executor-wide QPS cap (C6): one token per wire request, refilled at `qps` per second up to
 * `burst` tokens. Waiters are served first come, first served, and sleep on the injected clock, so
 * the simulation's virtual time drives it deterministically.
 */
import type { Clock } from '../core/ports.js';

export interface TokenBucket {
  /** Resolves when a token was taken; rejects with the signal's reason if aborted while waiting. */
  take(signal?: AbortSignal): Promise<void>;
}

export interface TokenBucketOptions {
  readonly qps: number;
  readonly burst?: number;
  readonly clock: Clock;
}

/**
 * A token bucket of `qps` tokens per second, at most `burst` (default 1) saved up.
 *
 * @example
 * ```ts
 * const bucket = createTokenBucket({ qps: 20, burst: 5, clock: systemClock });
 * await bucket.take(signal); // one token per wire request
 * ```
 */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const { qps, clock } = options;
  if (!(qps > 0)) throw new RangeError('qps must be positive');
  if (qps === Infinity) return { take: async () => undefined };
  const burst = Math.max(1, options.burst ?? 1);
  let tokens = burst;
  let last = clock.now();
  let queue: Promise<void> = Promise.resolve();

  const refill = (): void => {
    const now = clock.now();
    if (now > last) tokens = Math.min(burst, tokens + ((now - last) * qps) / 1000);
    last = Math.max(last, now);
  };

  return {
    take(signal) {
      const turn = queue.then(async () => {
        for (;;) {
          signal?.throwIfAborted();
          refill();
          if (tokens >= 1) {
            tokens -= 1;
            return;
          }
          await clock.sleep(Math.ceil(((1 - tokens) * 1000) / qps), signal);
        }
      });
      // The next waiter queues behind this one whether it got its token or gave up.
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
