import type { Clock } from '../core/ports.js';

/**
 * A sleep that can be cut short. Loops wait with `sleep(ms, stop)`; `wake()` ends the current
 * sleep at once, or the next one if none is in progress, so a wake between two sleeps is not lost.
 * All waiting goes through `clock.sleep`, so a virtual clock drives it in the simulation.
 */
export class Wakeup {
  readonly #clock: Clock;
  #current: AbortController | null = null;
  #pending = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  wake(): void {
    this.#pending = true;
    this.#current?.abort();
  }

  /** Resolves after `ms`, on `wake()`, or when `stop` aborts; never rejects. */
  async sleep(ms: number, stop: AbortSignal): Promise<void> {
    if (this.#pending || stop.aborted) {
      this.#pending = false;
      return;
    }
    const controller = new AbortController();
    const onStop = (): void => controller.abort();
    stop.addEventListener('abort', onStop, { once: true });
    this.#current = controller;
    try {
      await this.#clock.sleep(ms, controller.signal);
    } catch {
      // Woken or stopped: both mean "look again now".
    } finally {
      stop.removeEventListener('abort', onStop);
      if (this.#current === controller) this.#current = null;
      this.#pending = false;
    }
  }
}
