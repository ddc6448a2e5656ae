/**
 * What the model's `terminus_*` tools answer about the bridge's operations (their definitions:
 * `model-tools.ts`): wait, status, cancel, the list, the log and a reply to a question. Every
 * operation id a caller names is checked against its owner first; a foreign id reads as unknown.
 */
import { ExecutorError } from '../executor/executor-types.js';
import { isLocalState, type ToolOperation } from '../executor/operation.js';
import { isSettled } from '../executor/transitions.js';
import { endOf, endText } from './end-states.js';
import { LOG_LINES_PER_READ } from './model-tools.js';
import type { BridgeOperations, Caller, OperationsDeps } from './operations.js';
import { isPlainCall, logsAnswer, textAnswer, toolError, unknownOperation } from './render.js';

/** ` (outcome unknown, needs an operator)`: what an ended state means, for the list (empty otherwise). */
function labelOf(state: string): string {
  const end = isLocalState(state) ? endOf(state) : null;
  return end === null ? '' : ` (${end.label})`;
}

/** How long `terminus_operations` remembers finished operations. */
const RECENT = 20;

/** The answers of the model-facing tools, on one bridge's operations. */
export class ModelAnswers {
  private readonly ops: BridgeOperations;
  private readonly deps: OperationsDeps;

  constructor(ops: BridgeOperations) {
    this.ops = ops;
    this.deps = ops.deps;
  }

  /** `terminus_wait`: the result, or still running after `seconds` (capped at the inline wait). */
  async wait(operationId: string, seconds: number | undefined, caller: Caller): Promise<Record<string, unknown>> {
    const op = await this.ops.book.own(caller.owner, operationId);
    if (op === null) return unknownOperation(operationId);
    const handle = await this.ops.reach(op);
    // An operation that ended without a result to wait for (UNKNOWN...) is answered at once: waiting would not change it.
    if (handle === null || endOf(op.state) !== null) return this.ops.describe(op, false);
    if ('content' in handle) return handle;
    const ms = Math.min(
      this.deps.maxWaitMs,
      seconds === undefined ? this.deps.inlineWaitMs : Math.round(seconds * 1000),
    );
    return this.ops.follow(handle, caller, Math.max(0, ms), false);
  }

  /** `terminus_status`: the operation's state now, without waiting. */
  async status(operationId: string, caller: Caller): Promise<Record<string, unknown>> {
    const op = await this.ops.book.own(caller.owner, operationId);
    if (op === null) return unknownOperation(operationId);
    const receipt = await this.deps.ledger.getReceipt(op.callNodeId);
    const view = await this.ops.view(op, receipt);
    const end = endOf(op.state);
    if (end !== null) {
      return textAnswer(endText(end, { op, tool: view.tool, receipt }), { operation: view, next: end.next });
    }
    const text =
      receipt !== null
        ? `Operation ${op.id} (${view.tool}) ended: ${receipt.status}. Call terminus_wait {"operation":"${op.id}"} for its result.`
        : isSettled(op.state)
          ? `Operation ${op.id} (${view.tool}) ended without a result (${op.state}).`
          : (await this.ops.running(view, op, 0)).content[0]!.text;
    return textAnswer(text, { operation: view });
  }

  /** `terminus_cancel`: a request; the answer says what the server decided within the inline wait. */
  async cancel(operationId: string, caller: Caller): Promise<Record<string, unknown>> {
    const op = await this.ops.book.own(caller.owner, operationId);
    if (op === null) return unknownOperation(operationId);
    // Ended without a result to wait for (UNKNOWN...): no cancel can be sent, and the answer says what to do instead.
    if (endOf(op.state) !== null) return this.notCancelled(op);
    if (isPlainCall(op)) {
      const view = await this.ops.view(op, null);
      return textAnswer(
        `Operation ${op.id} (${view.tool}) is a synchronous call: the upstream runs it without a task, so there is ` +
          `nothing a cancel can name; nothing was sent. It ends when the upstream answers: terminus_wait {"operation":"${op.id}"}.`,
        { operation: view, cancel: 'not_sent' },
      );
    }
    const handle = await this.ops.reach(op);
    if (handle !== null && 'content' in handle) return handle;
    const receipt = await this.deps.ledger.getReceipt(op.callNodeId);
    if (handle === null || receipt !== null || isSettled(op.state)) {
      const view = await this.ops.view(op, receipt);
      return textAnswer(
        `Operation ${op.id} (${view.tool}) had already ended (${receipt?.status ?? op.state}); nothing to cancel.` +
          (receipt?.status === 'completed' ? ` Its result: terminus_wait {"operation":"${op.id}"}.` : ''),
        { operation: view, cancel: 'already_ended' },
      );
    }
    const outcome = await handle.cancel();
    const settled = await this.ops.settle(handle, caller, this.deps.inlineWaitMs, false);
    const now = (await this.deps.ledger.load(op.id)) ?? op;
    const after = settled.kind === 'receipt' ? settled.receipt : null;
    const view = await this.ops.view(now, after);
    if (after?.status === 'cancelled') {
      return textAnswer(`Operation ${op.id} (${view.tool}) is cancelled: the server stopped it.`, {
        operation: view,
        cancel: 'cancelled',
      });
    }
    if (after !== null) {
      return textAnswer(
        `Operation ${op.id} (${view.tool}) ended ${after.status} before the cancel took effect; call terminus_wait {"operation":"${op.id}"} for its result.`,
        { operation: view, cancel: 'lost_race' },
      );
    }
    if (endOf(now.state) !== null) return this.notCancelled(now);
    const why = outcome.requested ? 'the cancel was sent' : `the cancel was not sent (${outcome.reason ?? 'refused'})`;
    return textAnswer(
      `Operation ${op.id} (${view.tool}): ${why}; the server has not confirmed it yet (state ${now.state}). ` +
        `Check again with terminus_status {"operation":"${op.id}"}.`,
      { operation: view, cancel: outcome.requested ? 'requested' : 'not_sent' },
    );
  }

  /** `terminus_cancel` on an operation that ended without a result to wait for: why nothing was sent, and its end. */
  private async notCancelled(op: ToolOperation): Promise<Record<string, unknown>> {
    const end = endOf(op.state)!;
    const receipt = await this.deps.ledger.getReceipt(op.callNodeId);
    const view = await this.ops.view(op, receipt);
    const text = `Operation ${op.id} (${view.tool}): ${end.cancel}.\n${endText(end, { op, tool: view.tool, receipt })}`;
    return textAnswer(text, { operation: view, cancel: end.cancelOutcome, next: end.next });
  }

  /** `terminus_operations`: this caller's operations in flight and the last ones that ended. */
  async operations(caller: Caller): Promise<Record<string, unknown>> {
    const { open, settled } = await this.ops.book.list(caller.owner, RECENT);
    const views = await Promise.all([
      ...open.map((op) => this.ops.view(op, null)),
      ...settled.map(async (op) => this.ops.view(op, await this.deps.ledger.getReceipt(op.callNodeId))),
    ]);
    const lines = views.map(
      (v) =>
        `- ${v.id} ${v.tool}: ${v.outcome ?? v.state}${labelOf(v.state)}${v.progress === null || v.outcome !== undefined ? '' : ` ${v.progress.done}/${v.progress.total ?? '?'}`}` +
        `${v.input === undefined ? '' : ' (needs input: terminus_respond)'} since ${v.startedAt}`,
    );
    const text =
      views.length === 0
        ? 'No operations: nothing is running and nothing ended recently.'
        : `${open.length} in flight, ${settled.length} ended recently:\n${lines.join('\n')}`;
    return textAnswer(text, { operations: views });
  }

  /**
   * `terminus_logs`: one page of the operation's log after `after`, with the cursor to pass next time.
   * Reading is no effect on the operation (its machine is never stepped).
   */
  async logs(operationId: string, after: number | undefined, caller: Caller): Promise<Record<string, unknown>> {
    const op = await this.ops.book.own(caller.owner, operationId);
    if (op === null) return unknownOperation(operationId);
    const from = after ?? 0;
    const receipt = await this.deps.ledger.getReceipt(op.callNodeId);
    const view = await this.ops.view(op, receipt);
    try {
      const page = await this.deps.executor.readLogs(op.id, { after: from, limit: LOG_LINES_PER_READ });
      this.ops.noteLogsKept(op, true);
      return logsAnswer(view, page, from, LOG_LINES_PER_READ);
    } catch (error) {
      if (error instanceof ExecutorError && error.code === 'no_logs') {
        this.ops.noteLogsKept(op, false);
        return toolError(
          `${view.tool} (operation ${op.id}): its upstream keeps no task logs; terminus_status shows its progress.`,
        );
      }
      if (error instanceof ExecutorError && error.code === 'no_task') {
        return textAnswer(
          `${view.tool} (operation ${op.id}) has no log to read: ${error.message}. terminus_status shows its state.`,
          { operation: view.id, lines: [], next: from, done: isSettled(op.state) },
        );
      }
      return toolError(
        `${view.tool} (operation ${op.id}): its log cannot be read now (${String(error)}); try again later.`,
      );
    }
  }

  /** `terminus_respond`: answers the open input question of an operation (bound to its round). */
  async respond(
    operationId: string,
    response: Record<string, unknown>,
    key: string | undefined,
    caller: Caller,
  ): Promise<Record<string, unknown>> {
    const op = await this.ops.book.own(caller.owner, operationId);
    if (op === null) return unknownOperation(operationId);
    const pending = this.deps.questions.pending(op.id).filter((q) => key === undefined || q.key === key);
    const question = pending[0];
    if (question === undefined) {
      return toolError(`Operation ${op.id} is not waiting for input (state ${op.state}); nothing was sent.`);
    }
    const reply = typeof response.action === 'string' ? response : { action: 'accept', content: response };
    this.deps.questions.answer(question, reply);
    const handle = await this.ops.reach(op);
    if (handle === null) return this.ops.describe(op, false);
    if ('content' in handle) return handle;
    return this.ops.follow(handle, caller, this.deps.inlineWaitMs, false);
  }
}
