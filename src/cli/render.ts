/**
 * The progress display of `terminus call`, on stderr: one redrawn line on a terminal (state, status
 * message, a bar when the server reports progress, elapsed time), plain lines elsewhere, printed
 * only when something changed so a log stays readable.
 */
import type { Writable } from 'node:stream';
import type { OperationActivity, OperationStatus } from '../executor/executor-types.js';

/** What the display shows; every field is optional so callers can feed partial updates. */
export interface ProgressView {
  /** Local state (UPPER_SNAKE): executor bookkeeping. */
  readonly state?: string;
  /** Last wire status (lower case) the server reported. */
  readonly serverStatus?: string | null;
  readonly taskId?: string | null;
  readonly message?: string;
  readonly progress?: { readonly done: number; readonly total?: number };
  readonly activity?: OperationActivity;
  readonly cancel?: OperationStatus['cancel'];
}

/** `server unreachable (connection refused): retrying in 4 s (attempt 3)`; empty while polling. */
export function describeActivity(activity: OperationActivity | undefined, now: number): string {
  if (activity === undefined || activity.kind === 'polling') return '';
  const seconds = Math.max(0, Math.ceil((activity.retryAt - now) / 1000));
  const when = `${seconds === 0 ? 'retrying now' : `retrying in ${seconds} s`} (attempt ${activity.attempt})`;
  const reason = shortReason(activity.reason);
  const why = reason === '' ? '' : `: ${reason}`;
  switch (activity.kind) {
    case 'unreachable':
      return `server unreachable, ${when}${why}`;
    case 'throttled':
      return `throttled by the server, ${when}${why}`;
    case 'retrying':
      return `${when}${why}`;
  }
}

/** `connection failed: fetch failed (connect ECONNREFUSED 127.0.0.1:3000)` -> the innermost cause. */
function shortReason(reason: string): string {
  const inner = /\(([^()]+)\)\)*$/.exec(reason);
  return inner === null ? reason : inner[1]!;
}

const CANCEL_TEXT: Readonly<Record<NonNullable<OperationStatus['cancel']>, string>> = {
  requested: 'cancel requested (not yet acknowledged by the server)',
  delivered: 'cancel delivered; waiting for the server to confirm',
  confirmed: 'cancel confirmed',
};

/** `12.3s`, `4m05s`, `2h03m`. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** `[#####-----]  50%`; a count alone when the total is unknown. */
export function progressBar(progress: { readonly done: number; readonly total?: number }, width = 20): string {
  const { done, total } = progress;
  if (total === undefined || !(total > 0)) return `${done} done`;
  const ratio = Math.min(1, Math.max(0, done / total));
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% (${done}/${total})`;
}

/**
 * One status line, without elapsed time (so unchanged lines compare equal). `now` counts down a
 * retry; the server status is shown as "last seen" while the server cannot be reached, since it is
 * then a memory, not news.
 */
export function describeView(view: ProgressView, now = 0): string {
  const parts: string[] = [];
  const activity = describeActivity(view.activity, now);
  if (view.state !== undefined) {
    const label = activity === '' ? 'server' : 'server last said';
    parts.push(view.serverStatus ? `${view.state} (${label}: ${view.serverStatus})` : view.state);
  }
  if (activity !== '') parts.push(activity);
  if (view.cancel !== undefined) parts.push(CANCEL_TEXT[view.cancel]);
  if (view.progress !== undefined) parts.push(progressBar(view.progress));
  if (view.message !== undefined && view.message !== '') parts.push(view.message);
  return parts.join('  ');
}

export interface DisplayStream extends Pick<Writable, 'write'> {
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export class ProgressDisplay {
  private readonly out: DisplayStream;
  private readonly now: () => number;
  private readonly startedAt: number;
  private view: ProgressView = {};
  private lastLine = '';
  private drawn = false;
  private ticker: NodeJS.Timeout | null = null;
  private quiet = false;
  private stopped = false;

  constructor(out: DisplayStream, now: () => number) {
    this.out = out;
    this.now = now;
    this.startedAt = now();
  }

  /** What is shown now. */
  get current(): ProgressView {
    return this.view;
  }

  get interactive(): boolean {
    return this.out.isTTY === true;
  }

  /** Starts the elapsed-time ticker (terminal only). */
  start(): void {
    if (!this.interactive || this.ticker !== null) return;
    this.ticker = setInterval(() => this.draw(), 250);
    this.ticker.unref();
  }

  update(patch: ProgressView): void {
    this.view = { ...this.view, ...patch };
    if (this.interactive) this.draw();
    else if (!this.quiet) this.writeLine();
  }

  /** Non-terminal output: one line per change; a change made during a prompt is written after it. */
  private writeLine(): void {
    const line = describeView(this.view, this.now());
    if (line === this.lastLine) return;
    this.out.write(`[${formatElapsed(this.now() - this.startedAt)}] ${line}\n`);
    this.lastLine = line;
  }

  /** A line that stays (an event worth keeping), printed above the redrawn status line. */
  note(text: string): void {
    this.clear();
    this.out.write(`${text}\n`);
    if (this.interactive && !this.quiet) this.draw();
  }

  /** Clears the status line and stops redrawing (before a prompt or the final output). */
  pause(): void {
    this.quiet = true;
    this.clear();
  }

  /** Redraws after a prompt; nothing once stopped (a prompt that ends after the command's end). */
  resume(): void {
    if (this.stopped) return;
    this.quiet = false;
    if (this.interactive) this.draw();
    else this.writeLine();
  }

  /** Leaves the current line on screen (a terminal's line is redrawn, so it would vanish at `stop`). */
  keep(): void {
    if (this.interactive) {
      this.draw();
      this.out.write('\n');
      this.drawn = false;
    } else this.writeLine();
  }

  stop(): void {
    if (this.ticker !== null) clearInterval(this.ticker);
    this.ticker = null;
    this.stopped = true;
    this.pause();
  }

  private clear(): void {
    if (this.interactive && this.drawn) this.out.write('\r\x1b[2K');
    this.drawn = false;
  }

  private draw(): void {
    if (this.quiet) return;
    const elapsed = formatElapsed(this.now() - this.startedAt);
    // A terminal of unknown size (a pty nobody sized reports 0 columns) is taken as 80 wide.
    const columns = this.out.columns !== undefined && this.out.columns > 0 ? this.out.columns : 80;
    const width = Math.max(20, columns - 1);
    const line = `${elapsed}  ${describeView(this.view, this.now())}`;
    this.out.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
    this.drawn = true;
  }
}
