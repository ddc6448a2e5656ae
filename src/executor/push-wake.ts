import type { Clock } from '../core/ports.js';

/** Marks the followed task's next read due: call it with the id a push named. */
export type PushSeen = (taskId: string) => void;

/**
 * The pushes a follower (`followLogs`, `followEvents`) waits on between its reads. While it follows
 * a named task, the wire's listeners for it are held from the first `listen` to `stop` (a push
 * between two reads is kept, not lost between two pauses). A push only marks the next read due:
 * the read by cursor is what yields.
 */
export interface PushWake {
  /** Subscribes once (later calls do nothing): `subscribe` returns the wire's unsubscribers. */
  listen(taskId: string, subscribe: (seen: PushSeen) => readonly ((() => void) | undefined)[]): void;
  /** Sleeps `ms`, ended early by the caller's signal or, when `followed`, by a push since the last read. */
  pause(ms: number, followed?: boolean): Promise<void>;
  /** Drops the listeners. */
  stop(): void;
}

export function pushWake(clock: Clock, signal: AbortSignal | undefined): PushWake {
  let held: { pending: boolean; wake: AbortController; stop(): void } | null = null;
  return {
    listen(taskId, subscribe) {
      if (held !== null) return;
      const mine = { pending: false, wake: new AbortController(), stop: () => undefined as void };
      const stops = subscribe((id) => {
        if (id !== taskId) return;
        mine.pending = true;
        mine.wake.abort();
      });
      mine.stop = () => {
        for (const stop of stops) stop?.();
      };
      held = mine;
    },
    async pause(ms, followed = true) {
      const pushes = followed ? held : null;
      if (pushes !== null && pushes.pending) {
        pushes.pending = false;
        return;
      }
      const wake = new AbortController();
      const onAbort = (): void => wake.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (pushes !== null) {
        pushes.wake = new AbortController();
        pushes.wake.signal.addEventListener('abort', onAbort, { once: true });
      }
      try {
        await clock.sleep(ms, wake.signal).catch(() => undefined);
      } finally {
        signal?.removeEventListener('abort', onAbort);
        if (pushes !== null) pushes.pending = false;
      }
    },
    stop() {
      held?.stop();
      held = null;
    },
  };
}
