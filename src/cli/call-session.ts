/**
 * One `terminus call` following its operation through the executor: the progress display, input
 * prompts (one at a time), Ctrl-C (stop following, or `--cancel-on-interrupt`), and the outcome the
 * command prints, from the receipt or from why there is none.
 */
import { isTerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import { WireUnavailableError } from '../executor/adapters/index.js';
import { createExecutor } from '../executor/executor.js';
import { ExecutorError, type OperationHandle, type OperationStatus } from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import { isSettled } from '../executor/transitions.js';
import { cliConnector, driveFailure } from './call-connect.js';
import { CallLogs } from './call-logs.js';
import { credentialMessage, credentialOf, isCredentialFailure, serverCredential } from './credential.js';
import type { CallNodeChoice } from './call-node.js';
import {
  EXIT,
  followFailure,
  nextSteps,
  noReceipt,
  printOutcome,
  receiptOutcome,
  type CallOutcome,
  type NextStepsContext,
} from './call-outcome.js';
import type { CallFlags, CallRequest } from './call-request.js';
import { PromptGate } from './approval.js';
import { completeProgress, progressView, stateView } from './follow.js';
import { formatElapsed, ProgressDisplay } from './render.js';

/** One run of `terminus call`: submits or re-attaches, follows, prompts, and ends with one outcome. */
export class CallSession {
  private readonly display = new ProgressDisplay(process.stderr, () => Date.now());
  private readonly gate: PromptGate;
  private handle: OperationHandle | null = null;
  private last: OperationStatus | null = null;
  private attached = false;
  private interrupts = 0;
  private readonly ledger: Ledger;
  private readonly request: CallRequest;
  private readonly flags: CallFlags;
  private readonly logs: CallLogs;

  constructor(ledger: Ledger, request: CallRequest, flags: CallFlags) {
    this.ledger = ledger;
    this.request = request;
    this.flags = flags;
    this.logs = new CallLogs(this.display, ledger, flags.json);
    this.gate = new PromptGate({
      display: this.display,
      header: (r) => `${r.tool} asks for input (task ${r.taskId ?? '?'}, round ${r.round}, ${r.key})`,
      cancelTask: () => this.cancelAtPrompt(),
      hold: () => this.logs.hold(),
      release: () => this.logs.release(),
    });
  }

  async run(choice: CallNodeChoice): Promise<CallOutcome> {
    const { server, tool, args } = this.request;
    const executor = await createExecutor({
      ledger: this.ledger,
      connect: cliConnector({
        clock: systemClock,
        wire: this.flags.wire,
        headers: this.request.headers,
        stderr: this.flags.verbose ? 'inherit' : 'ignore',
        // What the server said in one answer is the one source of the bar and its message; the
        // executor's statuses (`watch`) carry the state only, their progress is the record's last.
        // An answer with neither (a finished task carries no progress) is no report: the bar stays.
        onSnapshot: (s) => {
          if (s.progress !== undefined || s.statusMessage !== undefined) {
            this.display.update(progressView(s.progress, s.statusMessage));
          }
        },
      }),
      credentialOf: (target) => serverCredential(target, this.request.headers),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      logger: this.logger(),
      approvalGate: this.gate.ask,
      // The CLI decides on a refused or doubtful submission itself; it never resubmits silently.
      resubmitNeverCreated: false,
    });
    const onSigint = (): void => this.interrupt();
    process.on('SIGINT', onSigint);
    this.display.start();
    try {
      this.announce(choice);
      this.attached = choice.kind === 'attach';
      this.display.update({ state: this.attached ? `ATTACHING ${server}` : `CONNECTING ${server}` });
      try {
        this.handle = await executor.submit({
          callNodeId: choice.callNodeId,
          server,
          tool,
          args,
          budgetMs: this.flags.budget === undefined ? null : this.flags.budget * 1000,
        });
      } catch (error) {
        return await this.submitFailure(choice.callNodeId, error);
      }
      if (this.handle.attached && choice.kind === 'first') {
        this.attached = true;
        this.display.note(
          `call node ${choice.callNodeId} is already in the ledger: attached to operation ${this.handle.operationId}`,
        );
      }
      if (this.interrupts > 0) this.onFirstInterrupt(this.handle);
      const watching = this.watch(this.handle);
      const logging = this.flags.followLogs ? this.logs.follow(this.handle) : null;
      const outcome = await this.settle(this.handle);
      await watching;
      if (logging !== null) {
        await this.logs.tail(logging, outcome);
        // After the log's last lines, so the final status line stays below them.
        if (outcome.receipt?.status === 'completed') this.completeProgress();
      }
      // The person (stdout) is this receipt's downstream (C7): acknowledged here, so `ops prune`
      // may forget it later. A crash before the print loses only the print: `ops result` has it.
      if (outcome.receipt !== null) await executor.outbox.ack(outcome.receipt.id);
      return outcome;
    } finally {
      process.off('SIGINT', onSigint);
      this.display.stop();
      // Before closing the executor: a prompt still waiting on stdin would keep a driver task open.
      this.gate.close();
      await executor.close();
    }
  }

  /** Says what a re-run does before it does it (the issue's "prints that it did"). */
  private announce(choice: CallNodeChoice): void {
    if (choice.kind === 'first') return;
    const prev = choice.previous;
    const age = formatElapsed(Date.now() - prev.createdAt);
    if (choice.kind === 'attach') {
      this.display.note(
        `re-attaching to operation ${prev.id} (started ${age} ago, ${prev.state}): this command is still in flight; --new starts another`,
      );
    } else if (this.flags.new && !isSettled(prev.state)) {
      this.display.note(`--new: starting a new operation beside ${prev.id} (${prev.state}, still in flight)`);
    } else {
      this.display.note(
        `the last run of this command ended (operation ${prev.id}, ${prev.state}, ${age} ago): starting a new operation`,
      );
    }
  }

  private logger(): Logger {
    const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
      if (this.flags.verbose) this.display.note(`${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
    };
    return { debug: () => undefined, info: write('info'), warn: write('warn'), error: write('error') };
  }

  private async watch(handle: OperationHandle): Promise<void> {
    for await (const s of handle.statuses()) {
      this.last = s;
      this.display.update(stateView(s));
    }
  }

  /** `[c]ancel` at a prompt: the task is cancelled (the question stays unanswered), as `--cancel-on-interrupt` does. */
  private cancelAtPrompt(): boolean {
    if (this.handle === null) return false;
    this.sendCancel(this.handle, '[c]ancel');
    return true;
  }

  private interrupt(): void {
    this.interrupts += 1;
    // A question being asked is abandoned (never answered) and its line ended first.
    this.gate.interrupt();
    if (this.interrupts > 1) return this.exitNow();
    if (this.handle === null) {
      this.display.note('Ctrl-C: stopping once the call is recorded (Ctrl-C again exits now)');
      return;
    }
    this.onFirstInterrupt(this.handle);
  }

  private onFirstInterrupt(handle: OperationHandle): void {
    if (this.flags.cancelOnInterrupt) return this.sendCancel(handle);
    this.display.note('Ctrl-C: stopped following; the task keeps running (Ctrl-C again exits now)');
    void handle.detach();
  }

  private nextSteps(operationId: string): string {
    return nextSteps(operationId, this.stepsContext());
  }

  private stepsContext(): NextStepsContext {
    return {
      ledger: this.flags.ledger,
      authed: Object.keys(this.request.headers).length > 0,
      followLogs: this.flags.followLogs,
      hasCredential: credentialOf(this.request.headers) !== null,
      command: 'call',
    };
  }

  /** The second Ctrl-C: no more waiting for anything, the operation stays in the ledger. */
  private exitNow(): never {
    this.display.stop();
    const id = this.handle?.operationId ?? this.last?.operationId;
    process.stderr.write(
      `Ctrl-C again: exiting now; ${id === undefined ? 'nothing was submitted' : `operation ${id} stays in the ledger${this.nextSteps(id)}`}\n`,
    );
    if (this.flags.json) {
      const s = this.last;
      const operation =
        s === null
          ? null
          : {
              id: s.operationId,
              callNodeId: s.callNodeId,
              taskId: s.taskId,
              state: s.state,
              wire: null,
              server: this.request.server,
            };
      process.stdout.write(
        `${JSON.stringify({ status: 'detached', isError: false, exitCode: EXIT.detached, attached: this.attached, receipt: null, result: null, operation, message: 'exited on a second Ctrl-C' })}\n`,
      );
    }
    process.exit(EXIT.detached);
  }

  private sendCancel(handle: OperationHandle, why = 'Ctrl-C'): void {
    const exit = this.interrupts > 0 ? 'Ctrl-C again exits now' : 'Ctrl-C stops waiting';
    this.display.note(`${why}: cancel requested for ${handle.operationId}; waiting for the server (${exit})`);
    handle.cancel().then(
      (outcome) => {
        if (!outcome.requested) this.display.note(`cancel not sent (${outcome.reason ?? 'refused'})`);
      },
      (error: unknown) => this.display.note(`cancel failed: ${String(error)}`),
    );
  }

  private async settle(handle: OperationHandle): Promise<CallOutcome> {
    try {
      const receipt = await handle.result();
      const record = await this.ledger.load(handle.operationId);
      // With --follow-logs the bar is completed after the log's last lines (see `run`).
      if (receipt.status === 'completed' && !this.flags.followLogs) this.completeProgress();
      return receiptOutcome(receipt, record, this.attached);
    } catch (error) {
      const record = await this.ledger.load(handle.operationId);
      return followFailure(error, record, handle.operationId, {
        ...this.stepsContext(),
        attached: this.attached,
        interrupted: this.interrupts > 0,
      });
    }
  }

  private completeProgress(): void {
    completeProgress(this.display);
  }

  private async submitFailure(callNodeId: string, error: unknown): Promise<CallOutcome> {
    const fail = (message: string): CallOutcome => noReceipt('error', EXIT.failed, null, false, message);
    if (isCredentialFailure(error)) {
      // Another credential's operation under this call node, or a server refusing ours at connect.
      const record = error instanceof ExecutorError ? await this.ledger.loadByCallNode(callNodeId) : null;
      const message = credentialMessage(error, record, {
        hasCredential: credentialOf(this.request.headers) !== null,
        server: this.request.server,
        command: 'call',
      });
      return noReceipt('unauthorized', EXIT.unauthorized, record, record !== null, message);
    }
    if (isTerminusError(error, 'operation_conflict')) {
      const other = await this.ledger.loadByCallNode(callNodeId);
      const what =
        other === null
          ? 'another operation'
          : `operation ${other.id} (${other.tool.name}, other arguments, ${other.state})`;
      return fail(
        `call node ${callNodeId} already belongs to ${what}: a call node names one request; pass another --call-node, or drop it to derive one`,
      );
    }
    if (error instanceof WireUnavailableError) return fail(`${this.request.server}: ${error.message}`);
    if (error instanceof ExecutorError) return fail(error.message);
    return fail(driveFailure(this.request.server, this.flags.ledger, error));
  }

  print(outcome: CallOutcome): void {
    printOutcome(outcome, this.flags.json);
  }
}
