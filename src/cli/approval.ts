/**
 * The approval gate of `terminus call` and `terminus ops resume` (C10): the questions of input
 * rounds asked one at a time on stderr, with the status line cleared around each. `[c]ancel` cancels
 * the task and leaves the question unanswered; Ctrl-C abandons the question being asked (and any
 * later one) on a clean line: no answer is sent, the question stays open on the server.
 */
import type { ApprovalRequest } from '../executor/executor-types.js';
import { describeElicitation, LineReader, promptElicitation } from './prompt.js';

/** Why the gate gave no answer: the executor leaves the question open (asked again on the next resume). */
export class NoAnswer extends Error {
  constructor(why: 'cancel_task' | 'interrupted') {
    super(why === 'cancel_task' ? 'the task is being cancelled instead' : 'interrupted (Ctrl-C)');
    this.name = 'NoAnswer';
  }
}

/** What shows the status on stderr: quiet while a question is asked there. */
export interface StatusShown {
  pause(): void;
  resume(): void;
}

export interface PromptGateOptions {
  /** The redrawn status line (cleared) or the status log (held) while a question is asked. */
  readonly display?: StatusShown;
  /**
   * `[c]ancel` on a question of `operationId`: cancel its task; false when there is no handle to
   * cancel it with, and the question is then dismissed (`cancel`) instead of left open.
   */
  readonly cancelTask: (operationId: string) => boolean;
  /** The question's first line. */
  readonly header: (request: ApprovalRequest) => string;
  /** Around each question (the log follower holds its lines meanwhile). */
  readonly hold?: () => void;
  readonly release?: () => void;
}

export class PromptGate {
  private readonly options: PromptGateOptions;
  private reader: LineReader | null = null;
  private turns: Promise<unknown> = Promise.resolve();
  private asking = false;
  private interrupted = false;

  constructor(options: PromptGateOptions) {
    this.options = options;
  }

  /** The executor's `approvalGate`: the reply, or a `NoAnswer` rejection. */
  readonly ask = (request: ApprovalRequest): Promise<unknown> => {
    const turn = this.turns.then(() => this.prompt(request));
    this.turns = turn.catch(() => undefined);
    return turn;
  };

  /**
   * Ctrl-C, or the command ending (its budget): a question being asked ends its line (after the
   * `^C` a terminal echoed), so what is printed next starts on a line of its own; it and every later
   * one get no answer.
   */
  interrupt(): void {
    if (this.asking && this.reader?.waitingForLine === true) process.stderr.write('\n');
    this.interrupted = true;
    this.reader?.interrupt();
  }

  /** Before the executor closes: a question still open is abandoned, and stdin is let go. */
  close(): void {
    this.interrupt();
    this.reader?.close();
  }

  private async prompt(request: ApprovalRequest): Promise<unknown> {
    if (this.interrupted) throw new NoAnswer('interrupted');
    this.reader ??= new LineReader(process.stdin);
    const { display } = this.options;
    display?.pause();
    this.options.hold?.();
    this.asking = true;
    try {
      const result = await promptElicitation(describeElicitation(request.request), this.options.header(request), {
        reader: this.reader,
        out: process.stderr,
        echo: process.stdin.isTTY !== true,
      });
      if (result.kind === 'reply') return result.reply;
      if (result.kind === 'cancel_task' && !this.options.cancelTask(request.operationId)) return { action: 'cancel' };
      throw new NoAnswer(result.kind);
    } finally {
      this.asking = false;
      display?.resume();
      this.options.release?.();
    }
  }
}
