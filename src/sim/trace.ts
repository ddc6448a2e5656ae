import { createHash } from 'node:crypto';

/**
 * The event trace of one series: one line per thing that happened, stamped with virtual time
 * relative to the series start. Two runs of one seed must produce the same lines (determinism
 * check), and a failing series prints its lines.
 */
export interface TraceEntry {
  readonly t: number;
  readonly who: string;
  readonly what: string;
}

export class Trace {
  readonly entries: TraceEntry[] = [];
  readonly #start: number;
  readonly #now: () => number;
  readonly #keep: boolean;
  readonly #hash = createHash('sha256');

  /** `keep: false` hashes lines without holding them (the fast path of large gate runs). */
  constructor(now: () => number, keep: boolean) {
    this.#now = now;
    this.#start = now();
    this.#keep = keep;
  }

  add(who: string, what: string): void {
    const t = this.#now() - this.#start;
    this.#hash.update(`${t} ${who} ${what}\n`);
    if (this.#keep) this.entries.push({ t, who, what });
  }

  digest(): string {
    return this.#hash.copy().digest('hex');
  }
}

export function formatTrace(entries: readonly TraceEntry[]): string {
  return entries.map((e) => `${String(e.t).padStart(8)}ms  ${e.who.padEnd(10)} ${e.what}`).join('\n');
}
