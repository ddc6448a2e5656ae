/**
 * Slots of something a caller holds open (2025 HTTP sessions, task listen streams), bounded twice:
 * all callers together (`total`) and each caller (`perCaller`), so one caller filling its share
 * never refuses another. A caller is its principal (`principalOf`): every unauthenticated HTTP
 * caller is the one principal `anonymous`, so anonymous callers share one share.
 */
export interface SlotLimits {
  readonly total: number;
  readonly perCaller: number;
}

/** Why `admit` refused: which bound, with its value. */
export interface SlotRefusal {
  readonly ok: false;
  readonly scope: 'caller' | 'server';
  readonly limit: number;
}

export class CallerSlots {
  readonly #limits: SlotLimits;
  readonly #held = new Map<string, number>();
  #open = 0;

  constructor(limits: SlotLimits) {
    this.#limits = limits;
  }

  /** Slots held, all callers. */
  get size(): number {
    return this.#open;
  }

  /** Slots `caller` holds. */
  heldBy(caller: string): number {
    return this.#held.get(caller) ?? 0;
  }

  /**
   * Takes one slot for `caller`, or says which bound refuses it: the caller's own first, so a caller
   * at its bound is told about its own, not the server's. A taken slot MUST be given back once with
   * `release`.
   */
  admit(caller: string): { readonly ok: true } | SlotRefusal {
    const mine = this.heldBy(caller);
    if (mine >= this.#limits.perCaller) return { ok: false, scope: 'caller', limit: this.#limits.perCaller };
    if (this.#open >= this.#limits.total) return { ok: false, scope: 'server', limit: this.#limits.total };
    this.#held.set(caller, mine + 1);
    this.#open++;
    return { ok: true };
  }

  /** Gives one slot of `caller` back. */
  release(caller: string): void {
    const mine = this.heldBy(caller);
    if (mine === 0) return;
    if (mine === 1) this.#held.delete(caller);
    else this.#held.set(caller, mine - 1);
    this.#open--;
  }
}
