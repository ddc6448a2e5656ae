/**
 * `terminus call --follow-logs`: the task's own log, line by line above the status line (stderr),
 * held while a prompt is open, and after the receipt its tail for at most `LOG_TAIL_MS`.
 */
import { ExecutorError, type OperationHandle } from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import type { CallOutcome } from './call-outcome.js';
import { LogMarks } from './log-lines.js';
import type { ProgressDisplay } from './render.js';

/** After the receipt, how long the CLI waits for the rest of the task's log (the server says `done`). */
const LOG_TAIL_MS = 10_000;

/** The log of one call's task, printed through the call's progress display. */
export class CallLogs {
  /** Aborted when following stops (Ctrl-C, budget) or the log's tail was waited for long enough. */
  private readonly stop = new AbortController();
  /** Log lines that came during a prompt, printed once it is answered (never inside it). */
  private held: string[] | null = null;
  private readonly display: ProgressDisplay;
  private readonly ledger: Ledger;
  private readonly json: boolean;

  constructor(display: ProgressDisplay, ledger: Ledger, json: boolean) {
    this.display = display;
    this.ledger = ledger;
    this.json = json;
  }

  /** A prompt opens: log lines wait until it is answered. */
  hold(): void {
    this.held ??= [];
  }

  /** The prompt was answered: the lines that came meanwhile, in order. */
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const line of held) this.display.note(line);
  }

  /** One line of the task's log, above the status line (held while a prompt is open). */
  private note(text: string): void {
    if (this.held !== null) this.held.push(text);
    else this.display.note(text);
  }

  /**
   * `--follow-logs`: the task's own log as it is written (issue 18). With `--json` each line goes to
   * stderr as the JSON object the server sent (stdout keeps its one object); else as text, with
   * `-- re-run, epoch N --` and dropped-lines markers.
   */
  async follow(handle: OperationHandle): Promise<void> {
    const marks = new LogMarks(0);
    const follower = handle.logs({
      signal: this.stop.signal,
      onRetry: (failure, retryInMs) =>
        this.note(`-- log: ${failure.kind} (${failure.message}); reading again in ${Math.ceil(retryInMs / 1000)} s --`),
    });
    try {
      for await (const line of follower) {
        if (this.json) {
          this.note(JSON.stringify(line));
          continue;
        }
        const { markers, text } = marks.render(line);
        for (const marker of markers) this.note(marker);
        this.note(text);
      }
    } catch (error) {
      // A call the server answered at once has no task, hence no log: nothing to say.
      const record = await this.ledger.load(handle.operationId);
      if (error instanceof ExecutorError && error.code === 'no_task' && record?.taskId === null) return;
      this.note(`-- log: ${error instanceof Error ? error.message : String(error)} --`);
    }
  }

  /** After the end: the rest of the log, for at most `LOG_TAIL_MS`; on detach, nothing more. */
  async tail(logging: Promise<void>, outcome: CallOutcome): Promise<void> {
    if (outcome.receipt === null) {
      this.stop.abort();
      await logging;
      return;
    }
    const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), LOG_TAIL_MS).unref());
    if ((await Promise.race([logging.then(() => 'done' as const), timer])) === 'late') {
      this.stop.abort();
      await logging;
      this.display.note(
        `-- the log was not complete ${LOG_TAIL_MS / 1000} s after the result: terminus ops logs ${outcome.receipt.operationId} reads it --`,
      );
    }
  }
}
