/**
 * What `terminus call` ends with: one `CallOutcome`, printed as one JSON object (`--json`) or as the
 * result on stdout and one receipt line on stderr. The JSON mirrors the receipt: `status` is the
 * receipt's status (`completed`, `failed`, `cancelled`, `expired`) when there is one, and a tool
 * error is `completed` with `isError: true` (X-08: the tool ran and answered), never `failed` (a
 * protocol-level failure); the exit code keeps the table below. `terminus ops resume ID` ends with
 * the same outcome, printed the same way.
 */
import { ExecutorError } from '../executor/executor-types.js';
import type { Receipt } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import { driveFailure } from './call-connect.js';
import { credentialMessage, isCredentialFailure } from './credential.js';
import { redact } from './open-store.js';
import { defaultLedgerPath, diskNote } from './paths.js';

/** Exit codes of `terminus call` (and `terminus ops resume` / `ops cancel`). */
export const EXIT = {
  completed: 0,
  failed: 1,
  usage: 2,
  detached: 3,
  /** The server refused the credentials (401/403), or the operation was submitted under another one. */
  unauthorized: 4,
  cancelled: 130,
} as const;

/** Without a receipt: why the command stopped. */
export type NoReceiptStatus = 'detached' | 'unknown' | 'refused' | 'unauthorized' | 'error';

/** What `--json` prints, and what the human output is made from. */
export interface CallOutcome {
  readonly status: Receipt['status'] | NoReceiptStatus;
  /** True only for a `completed` receipt whose `CallToolResult` has `isError: true`. */
  readonly isError: boolean;
  readonly exitCode: number;
  /** This run re-attached to an operation an earlier run of the same call node started. */
  readonly attached: boolean;
  readonly receipt: Receipt | null;
  readonly result: unknown;
  readonly operation: OperationView | null;
  readonly message?: string;
}

export interface OperationView {
  readonly id: string;
  readonly callNodeId: string;
  readonly taskId: string | null;
  readonly state: string;
  /** Null only in the object a second Ctrl-C prints (the record is not read again). */
  readonly wire: string | null;
  readonly server: string | null;
}

export function operationView(record: ToolOperation | null): OperationView | null {
  if (record === null) return null;
  return {
    id: record.id,
    callNodeId: record.callNodeId,
    taskId: record.taskId,
    state: record.state,
    wire: record.wire.name,
    server: record.server ?? null,
  };
}

export function isToolError(payload: unknown): boolean {
  return typeof payload === 'object' && payload !== null && (payload as { isError?: unknown }).isError === true;
}

/** The outcome a receipt gives: its status, and the exit code of the table. */
export function receiptOutcome(receipt: Receipt, record: ToolOperation | null, attached: boolean): CallOutcome {
  const toolError = receipt.status === 'completed' && isToolError(receipt.payload);
  const exitCode = {
    completed: toolError ? EXIT.failed : EXIT.completed,
    failed: EXIT.failed,
    cancelled: EXIT.cancelled,
    expired: EXIT.detached,
  }[receipt.status];
  return {
    status: receipt.status,
    isError: toolError,
    exitCode,
    attached,
    receipt,
    result: receipt.payload,
    operation: operationView(record),
    ...(receipt.status === 'expired' ? { message: 'the task expired before its result was read' } : {}),
  };
}

export function noReceipt(
  status: NoReceiptStatus,
  exitCode: number,
  record: ToolOperation | null,
  attached: boolean,
  message: string,
): CallOutcome {
  return {
    status,
    isError: false,
    exitCode,
    attached,
    receipt: null,
    result: null,
    operation: operationView(record),
    message,
  };
}

/** `--json`: the payload is printed once, as `result`. */
export function outcomeJson(outcome: CallOutcome): string {
  const receipt = outcome.receipt === null ? null : { ...outcome.receipt, payload: undefined };
  return `${JSON.stringify({ ...outcome, receipt })}\n`;
}

/** A `CallToolResult` as text: its text contents, then structured content; anything else as JSON. */
export function renderResult(payload: unknown): string {
  if (typeof payload !== 'object' || payload === null) return `${JSON.stringify(payload)}\n`;
  const result = payload as { content?: unknown };
  if (Array.isArray(result.content)) {
    const parts = result.content.map((item: { type?: unknown; text?: unknown }) =>
      item.type === 'text' && typeof item.text === 'string' ? item.text : JSON.stringify(item),
    );
    const text = parts.join('\n');
    return text.endsWith('\n') || text === '' ? text : `${text}\n`;
  }
  return `${JSON.stringify(payload, null, 2)}\n`;
}

/**
 * The receipt line on stderr: `completed: receipt rcpt_… (operation op_…, task …, ACCEPTED)`; without
 * a receipt, `terminus call: detached (…)` with the command's name.
 */
export function receiptLine(outcome: CallOutcome, command = 'terminus call'): string {
  const op = outcome.operation;
  // C12: a server that answered the call at once made no task; say so rather than "task none".
  const task = outcome.receipt?.immediate === true ? 'answered at once, no task' : `task ${op?.taskId ?? 'none'}`;
  const where = op === null ? '' : ` (operation ${op.id}, ${task}, ${op.state})`;
  if (outcome.receipt === null) return `${command}: ${outcome.status}${where}\n`;
  const status = outcome.isError ? 'completed with a tool error (isError)' : outcome.status;
  return `${status}: receipt ${outcome.receipt.id}${where}\n`;
}

/**
 * Why an operation left UNKNOWN has no outcome and what to do next, for `terminus call` and
 * `terminus ops resume` alike: the state, the evidence the executor recorded, and the commands.
 * `flags` is appended to each command (the ledger and server flags the run used).
 */
export function unknownMessage(record: ToolOperation, flags = ''): string {
  const task = record.taskId === null ? 'no task id was acknowledged' : `task ${record.taskId}`;
  const evidence = record.evidence.map((e) => `\n    ${new Date(e.at).toISOString()}  ${e.kind}: ${e.detail}`);
  return (
    `outcome unknown: operation ${record.id} is UNKNOWN (${task}); the executor sends nothing more on its own` +
    (evidence.length > 0 ? `\n  evidence:${evidence.join('')}` : '') +
    `\n  look at it:   terminus ops show ${record.id}${flags}` +
    `\n  cancel it:    terminus ops cancel ${record.id}${flags}` +
    `\n  or ask the server's operator whether the task ran; terminus ops reconcile${flags} lists every operation in doubt`
  );
}

/** Prints an outcome: `--json` the object on stdout; else the result on stdout, the receipt line on stderr. */
export function printOutcome(outcome: CallOutcome, json: boolean, command = 'terminus call'): void {
  if (json) {
    process.stdout.write(outcomeJson(outcome));
    return;
  }
  if (outcome.receipt !== null && outcome.status !== 'cancelled' && outcome.status !== 'expired') {
    process.stdout.write(renderResult(outcome.result));
  }
  process.stderr.write(receiptLine(outcome, command));
  if (outcome.message !== undefined) process.stderr.write(`  ${outcome.message}\n`);
}

/** What the suggested commands need to find the operation again. */
export interface NextStepsContext {
  readonly ledger: string;
  /** The run passed `--header`/`--token` (never stored: the next command needs them again). */
  readonly authed: boolean;
  readonly followLogs: boolean;
  /** The run's headers carry a credential (`credentialOf`); default: `authed`. */
  readonly hasCredential?: boolean;
  /** Which command prints the outcome, for the advice on a credential failure; default `call`. */
  readonly command?: 'call' | 'ops';
}

/** The ledger and server flags this run used, for the suggested commands (so they find the operation). */
export function flagsOf(context: Pick<NextStepsContext, 'ledger' | 'authed'>): string {
  const ledger = context.ledger === defaultLedgerPath() ? '' : ` --ledger ${quote(redact(context.ledger))}`;
  const auth = context.authed ? ' (with the same --header/--token)' : '';
  return `${ledger}${auth}`;
}

/** Suggested commands, with the ledger and server flags this run used (so they find the operation). */
export function nextSteps(operationId: string, context: NextStepsContext): string {
  const flags = flagsOf(context);
  return (
    `\n  follow again: terminus ops resume ${operationId}${flags}  (or run the same command again)` +
    `\n  cancel it:    terminus ops cancel ${operationId}${flags}` +
    (context.followLogs ? `\n  its log:      terminus ops logs ${operationId} --follow${flags}` : '')
  );
}

const quote = (text: string): string => (/^[\w./:@-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/** Following ended without a receipt (`handle.result()` threw): why, as an outcome. */
export function followFailure(
  error: unknown,
  record: ToolOperation | null,
  operationId: string,
  context: NextStepsContext & { readonly attached: boolean; readonly interrupted: boolean },
): CallOutcome {
  const fail = (status: NoReceiptStatus, code: number, message: string) =>
    noReceipt(status, code, record, context.attached, message);
  const next = nextSteps(operationId, context);
  if (isCredentialFailure(error)) {
    return fail(
      'unauthorized',
      EXIT.unauthorized,
      credentialMessage(error, record, {
        hasCredential: context.hasCredential ?? context.authed,
        command: context.command ?? 'call',
      }),
    );
  }
  if (!(error instanceof ExecutorError))
    return fail('error', EXIT.failed, driveFailure(undefined, context.ledger, error));
  switch (error.code) {
    case 'waiting_stopped': {
      // A task paused on a question waits for its answer; the next follower is asked again.
      const task =
        record?.state === 'INPUT_REQUIRED'
          ? 'the task waits for its answer (asked again when you follow it)'
          : 'the task keeps running';
      return fail(
        'detached',
        EXIT.detached,
        context.interrupted ? `stopped following; ${task}${next}` : `wait budget used up; ${task}${next}`,
      );
    }
    case 'never_created':
      return fail('refused', EXIT.failed, refusal(record));
    case 'unknown':
      return fail('unknown', EXIT.detached, record === null ? error.message : unknownMessage(record, flagsOf(context)));
    case 'ledger_error':
      return fail(
        'error',
        EXIT.failed,
        `${error.message}${diskNote(context.ledger, error)}\n  the operation stays in the ledger as last written; once the ledger can be written again:${next}`,
      );
    default:
      return fail('error', EXIT.failed, error.message);
  }
}

/** Why a submission was refused, from the evidence the machine recorded. */
export function refusal(record: ToolOperation | null): string {
  const evidence = record?.evidence.findLast((e) => e.kind === 'submit_rejected' || e.kind === 'input_asked_again');
  if (evidence?.kind === 'input_asked_again') return `the call ended unanswered: ${evidence.detail}`;
  return evidence === undefined ? 'the server refused the call' : `the server refused the call: ${evidence.detail}`;
}
