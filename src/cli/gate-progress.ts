/**
 * Progress on stderr while the series run. On a terminal, one line rewritten every 2 s; elsewhere
 * (CI, a file) a line at every tenth of the series and at least once a minute, so an hours-long run
 * is never silent. A failing series is told at once, with its replay command, on both.
 */
export interface GateProgressOptions {
  /** Put before every line (the wire, when a run has several). */
  readonly prefix?: string;
  readonly total: number;
  /** `now()` when this run's series began. */
  readonly started: number;
  readonly out?: { readonly isTTY?: boolean; write(text: string): unknown };
  readonly now?: () => number;
  /** Series done before this run (from a checkpoint): not counted in the rate. */
  readonly already?: number;
  /** Failing series among them: the count goes on from there. */
  readonly failing?: number;
}

export class GateProgress {
  readonly #prefix: string;
  readonly #total: number;
  readonly #started: number;
  readonly #out: { readonly isTTY?: boolean; write(text: string): unknown };
  readonly #now: () => number;
  readonly #already: number;
  readonly #tty: boolean;
  #lastTick: number;
  #nextTenth: number;
  #failing: number;

  constructor(options: GateProgressOptions) {
    this.#prefix = options.prefix ?? '';
    this.#total = options.total;
    this.#started = options.started;
    this.#out = options.out ?? process.stderr;
    this.#now = options.now ?? (() => performance.now());
    this.#already = options.already ?? 0;
    this.#failing = options.failing ?? 0;
    this.#tty = this.#out.isTTY === true;
    this.#lastTick = this.#started;
    this.#nextTenth = Math.floor((this.#already * 10) / this.#total) + 1;
  }

  tick(done: number): void {
    const now = this.#now();
    const tenth = Math.floor((done * 10) / this.#total);
    const due = this.#tty ? now - this.#lastTick > 2_000 : tenth >= this.#nextTenth || now - this.#lastTick > 60_000;
    if (!due || done === this.#total || done === this.#already) return;
    this.#lastTick = now;
    this.#nextTenth = tenth + 1;
    const s = (now - this.#started) / 1000;
    const rate = (done - this.#already) / Math.max(s, 0.001);
    const line =
      `${this.#prefix}${done}/${this.#total} series (${Math.floor((100 * done) / this.#total)}%), ${span(s)}, ` +
      `${rate.toFixed(0)} series/s, about ${span((this.#total - done) / rate)} left, ${this.#failing} failing`;
    this.#out.write(this.#tty ? `\r${line}\x1b[K` : `${line}\n`);
  }

  failed(line: string): void {
    this.#failing++;
    this.#out.write(this.#tty ? `\r${line}\x1b[K\n` : `${line}\n`);
  }

  end(): void {
    if (this.#tty) this.#out.write('\n');
  }
}

/** Seconds as a person reads them: `95 s`, `41 min`, `31.3 h` (a million series run for hours). */
export function span(seconds: number): string {
  if (Math.round(seconds) < 120) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 120 ? `${minutes} min` : `${(seconds / 3600).toFixed(1)} h`;
}
