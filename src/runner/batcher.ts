/** How much one open batch may hold before its oldest items are dropped. */
export interface BatchBound {
  readonly maxItems: number;
  /** Summed `weigh(item)` of the items kept. */
  readonly maxBytes: number;
}

interface Open<T> {
  items: T[];
  /** Index of the oldest kept item: dropping from the front moves it, compaction is amortised. */
  head: number;
  bytes: number;
  /** Items dropped before the kept ones (pushed as dropped, or dropped here by the bound). */
  dropped: number;
  readonly sent: Promise<void>;
  readonly settle: (error?: Error) => void;
}

/**
 * Items written faster than `send` takes them wait in one open batch, sent whole when the send in
 * flight ends: one send at a time, so a writer that never awaits costs one send per turn of the
 * consumer, not one per item. The open batch is bounded: past `maxItems` or `maxBytes` its oldest
 * items are dropped and counted (the newest is always kept), and the count goes with the batch, so
 * memory stays bounded however fast the writer is.
 *
 * `push` returns the promise of the batch its items joined: it settles when that batch was sent
 * (or failed), and it is shared by every push of the batch. It never counts as an unhandled
 * rejection: a writer that does not await must not take the process down.
 */
export class Batcher<T> {
  readonly #bound: BatchBound;
  readonly #weigh: (item: T) => number;
  readonly #send: (items: T[], dropped: number) => Promise<void>;
  #open: Open<T> | null = null;
  /** The batch being sent. */
  #sending: Open<T> | null = null;
  #flushing = false;

  constructor(bound: BatchBound, weigh: (item: T) => number, send: (items: T[], dropped: number) => Promise<void>) {
    this.#bound = bound;
    this.#weigh = weigh;
    this.#send = send;
  }

  /**
   * Adds `items` after `dropped` items that were written before them but never kept (a bound
   * upstream). A gap leaves nothing older worth keeping: the items already waiting are dropped
   * too, so what is kept is always the newest run of items, as a bound that drops the oldest keeps.
   */
  push(items: readonly T[], dropped = 0): Promise<void> {
    const open = this.#openBatch();
    if (dropped > 0) {
      open.dropped += dropped + open.items.length - open.head;
      open.items = [];
      open.head = 0;
      open.bytes = 0;
    }
    for (const item of items) {
      open.items.push(item);
      open.bytes += this.#weigh(item);
    }
    this.#trim(open);
    if (!this.#flushing) {
      this.#flushing = true;
      void this.#flush();
    }
    return open.sent;
  }

  /**
   * Resolves once every item pushed so far was sent or dropped (never rejects). Items pushed
   * meanwhile are not waited for, so a writer that goes on writing cannot hold it for ever.
   */
  async drain(): Promise<void> {
    const last = this.#open ?? this.#sending;
    await last?.sent.catch(() => {});
  }

  #openBatch(): Open<T> {
    if (this.#open !== null) return this.#open;
    let settle: (error?: Error) => void = () => undefined;
    const sent = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    sent.catch(() => {});
    this.#open = { items: [], head: 0, bytes: 0, dropped: 0, sent, settle };
    return this.#open;
  }

  #trim(open: Open<T>): void {
    const { maxItems, maxBytes } = this.#bound;
    while (open.items.length - open.head > 1 && (open.items.length - open.head > maxItems || open.bytes > maxBytes)) {
      open.bytes -= this.#weigh(open.items[open.head] as T);
      open.head += 1;
      open.dropped += 1;
    }
    // Compact once the dropped prefix is as long as what is kept: O(1) amortised per item.
    if (open.head > 0 && open.head >= open.items.length - open.head) {
      open.items = open.items.slice(open.head);
      open.head = 0;
    }
  }

  async #flush(): Promise<void> {
    while (this.#open !== null) {
      const batch = this.#open;
      this.#open = null;
      this.#sending = batch;
      const items = batch.head === 0 ? batch.items : batch.items.slice(batch.head);
      try {
        await this.#send(items, batch.dropped);
        batch.settle();
      } catch (error) {
        batch.settle(error instanceof Error ? error : new Error('the send failed', { cause: error }));
      }
    }
    this.#sending = null;
    this.#flushing = false;
  }
}
