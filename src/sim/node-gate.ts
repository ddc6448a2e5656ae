/**
 * What a simulated node's process does to the calls it makes into a shared component (the task
 * store, the webhook outbox): live, they run; frozen (the node stalls), they wait and run at the
 * thaw, in order; dead (the node crashed), they never settle, and the frozen ones are dropped.
 */
export interface NodeGate {
  /** `fn` as the node calls it. */
  wrap<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
  kill(): void;
  freeze(): void;
  thaw(): void;
  /** Calls waiting for the thaw. */
  readonly held: number;
}

export function nodeGate(): NodeGate {
  let mode: 'live' | 'dead' | 'frozen' = 'live';
  const held: (() => void)[] = [];
  return {
    wrap:
      <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
      (...args: A): Promise<R> => {
        if (mode === 'dead') return new Promise<R>(() => {});
        if (mode === 'frozen') {
          return new Promise<R>((resolve, reject) => held.push(() => void fn(...args).then(resolve, reject)));
        }
        return fn(...args);
      },
    kill: () => {
      mode = 'dead';
      held.length = 0;
    },
    freeze: () => {
      if (mode === 'live') mode = 'frozen';
    },
    thaw: () => {
      if (mode !== 'frozen') return;
      mode = 'live';
      for (const run of held.splice(0)) run();
    },
    get held() {
      return held.length;
    },
  };
}
