/**
 * What the model reads: a tool's own result when the operation finished, otherwise a normal
 * `CallToolResult` saying that the work goes on, under which operation id, how far it is, and which
 * tool to call next. `structuredContent` carries the same facts for programs.
 */
import type { Receipt } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import type { LogPage, TaskSnapshot } from '../executor/wire-port.js';
import type { Question } from './questions.js';

export type ToolAnswer = Record<string, unknown> & { content: { type: 'text'; text: string }[] };

/** The facts about one operation that every answer shows. */
export interface OperationView {
  readonly id: string;
  /** The tool name as the host sees it. */
  readonly tool: string;
  readonly upstream: string | null;
  /** Local executor state (WORKING, INPUT_REQUIRED, ACCEPTED...). */
  readonly state: string;
  /** What the upstream last said (working, input_required, completed...), or null. */
  readonly status: string | null;
  readonly message: string | null;
  readonly progress: { readonly done: number; readonly total?: number } | null;
  readonly startedAt: string;
  readonly updatedAt: string;
  /** True when this call found the operation already running (never twice). */
  readonly attached?: boolean;
  readonly input?: readonly { key: string; round: number; message: string; requestedSchema?: unknown }[];
  /** How the operation ended, once it did. */
  readonly outcome?: string;
  /** True when its upstream keeps task logs: `terminus_logs` reads them (issue 18). */
  readonly logs?: boolean;
  /**
   * True while it is a plain call on the wire: a synchronous tool (no task), so no progress to
   * read and nothing to cancel; it ends when the upstream answers.
   */
  readonly plain?: boolean;
  /**
   * Why the bridge's last request about it got no usable answer (no answer, throttled, a malformed
   * answer it refused), while it keeps asking; absent once an answer came.
   */
  readonly trouble?: { readonly request: string; readonly reason: string; readonly attempt: number };
}

/** A synchronous tool's call still on the wire (recorded as sent plainly, no task named). */
export function isPlainCall(op: ToolOperation): boolean {
  return op.state === 'SUBMITTING' && op.taskId === null && op.evidence.some((e) => e.kind === 'plain_call_sent');
}

export function viewOf(
  op: ToolOperation,
  tool: string,
  snapshot: TaskSnapshot | undefined,
  questions: readonly Question[],
  receipt: Receipt | null,
): OperationView {
  return {
    id: op.id,
    tool,
    upstream: op.server ?? null,
    state: op.state,
    status: op.lastServerStatus,
    // The ledger keeps the last progress (shown again after a restart); a fresher snapshot wins.
    message: snapshot?.statusMessage ?? op.progress?.message ?? null,
    progress: snapshot?.progress ?? progressOf(op),
    startedAt: new Date(op.createdAt).toISOString(),
    updatedAt: new Date(op.updatedAt).toISOString(),
    ...(questions.length === 0
      ? {}
      : {
          input: questions.map((q) => ({
            key: q.key,
            round: q.round,
            message: q.message,
            ...(q.params.requestedSchema === undefined ? {} : { requestedSchema: q.params.requestedSchema }),
          })),
        }),
    ...(receipt === null ? {} : { outcome: receipt.status }),
    ...(isPlainCall(op) ? { plain: true } : {}),
    ...troubleOf(op),
  };
}

function troubleOf(op: ToolOperation): Pick<OperationView, 'trouble'> {
  const failure = op.lastFailure ?? null;
  if (failure === null) return {};
  return { trouble: { request: failure.request, reason: failure.reason, attempt: failure.attempt } };
}

function progressOf(op: ToolOperation): OperationView['progress'] {
  const progress = op.progress ?? null;
  if (progress === null) return null;
  return progress.total === undefined ? { done: progress.done } : { done: progress.done, total: progress.total };
}

function progressText(view: OperationView): string {
  if (view.plain === true) return 'a synchronous call: the upstream runs it without a task, so it reports no progress';
  const parts = [`status ${view.status ?? 'submitting'}`];
  if (view.progress !== null) {
    const { done, total } = view.progress;
    parts.push(
      total !== undefined && total > 0 ? `${Math.round((100 * done) / total)}% (${done}/${total})` : `${done}`,
    );
  }
  if (view.message !== null) parts.push(view.message);
  return parts.join(', ');
}

/** The answer while the operation goes on: for a model to read, and the same in structuredContent. */
export function stillRunning(view: OperationView, waitedSeconds: number): ToolAnswer {
  const ref = JSON.stringify({ operation: view.id });
  const lines = [
    `${view.tool} is still running as operation ${view.id} (${progressText(view)}).`,
    view.attached === true
      ? 'This call attached to the operation already running for the same tool and arguments; no second one was started.'
      : `It did not finish within ${waitedSeconds} s; the work goes on and nothing is lost.`,
  ];
  if (view.trouble !== undefined) {
    lines.push(
      `The bridge's last ${view.trouble.request} request to its upstream got no usable answer ` +
        `(${view.trouble.reason}; ${view.trouble.attempt} in a row): nothing from it was taken as the outcome, and the bridge keeps asking.`,
    );
  }
  let next = 'terminus_wait';
  if (view.input !== undefined && view.input.length > 0) {
    next = 'terminus_respond';
    for (const q of view.input) {
      lines.push(
        `It needs input: "${q.message}"${q.requestedSchema === undefined ? '' : ` (schema ${JSON.stringify(q.requestedSchema)})`}.`,
      );
    }
    lines.push(
      `Ask the user, then call terminus_respond {"operation":"${view.id}","response":{...}} with the answer ` +
        `(or {"action":"decline"}).`,
    );
  } else {
    lines.push(`Call terminus_wait ${ref} to wait for the result.`);
  }
  if (view.logs === true) {
    lines.push(`terminus_logs ${ref} reads what it has logged so far (results as they come), without waiting.`);
  }
  lines.push(
    (view.plain === true
      ? `terminus_status ${ref} shows its state; it cannot be cancelled from here (the upstream made no task). `
      : `terminus_status ${ref} shows its state, terminus_cancel ${ref} asks the server to stop it. `) +
      `Calling ${view.tool} again with the same arguments attaches to this operation; it never starts a second one.`,
  );
  return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { operation: view, next } };
}

/** `terminus_logs`: the page as text for the model, and the same facts (lines, cursor) for programs. */
export function logsAnswer(view: OperationView, page: LogPage, after: number, limit: number): ToolAnswer {
  const ref = (next: number): string => JSON.stringify({ operation: view.id, after: next });
  const lines: string[] = [];
  const first = page.lines[0];
  if (first !== undefined && first.seq > after + 1) {
    lines.push(
      `(${first.seq - after - 1} older line(s) were dropped by the server's per-task bound before this read.)`,
    );
  }
  let epoch: number | null = null;
  for (const line of page.lines) {
    if (epoch !== null && line.epoch !== epoch) lines.push(`(re-run after a restart, epoch ${line.epoch}:)`);
    epoch = line.epoch;
    const fields = line.fields === undefined ? '' : ` ${JSON.stringify(line.fields)}`;
    lines.push(`${line.seq}: ${line.stream === 'output' ? '[output] ' : ''}${line.text}${fields}`);
  }
  const head =
    page.lines.length === 0
      ? `${view.tool} (operation ${view.id}) has no log lines after ${after}.`
      : `${view.tool} (operation ${view.id}), log lines ${first!.seq}-${page.lines.at(-1)!.seq}:`;
  const more = page.lines.length >= limit;
  const tail = page.done
    ? `The log is complete (the operation ${page.status}).`
    : more
      ? `More lines follow: call terminus_logs ${ref(page.next)} now.`
      : `It is still ${page.status}: call terminus_logs ${ref(page.next)} later for newer lines (or terminus_wait for the result).`;
  return textAnswer([head, ...lines, tail].join('\n'), {
    operation: view.id,
    lines: page.lines,
    next: page.next,
    dropped: page.dropped,
    status: page.status,
    done: page.done,
  });
}

/** A settled operation's receipt as the host's tool result: the tool's own result when completed. */
export function fromReceipt(receipt: Receipt, view: OperationView): Record<string, unknown> {
  if (receipt.status === 'completed' && typeof receipt.payload === 'object' && receipt.payload !== null) {
    return receipt.payload as Record<string, unknown>;
  }
  const error = receipt.payload as { message?: string; code?: number } | null;
  const text =
    receipt.status === 'failed'
      ? `${view.tool} (operation ${view.id}) failed: ${error?.message ?? 'no message'}${error?.code === undefined ? '' : ` (code ${error.code})`}`
      : receipt.status === 'cancelled'
        ? `${view.tool} (operation ${view.id}) was cancelled; it has no result.`
        : `${view.tool} (operation ${view.id}) expired on the server before its result was read.`;
  return { content: [{ type: 'text', text }], structuredContent: { operation: view }, isError: true };
}

/** A tool error for the model (the call is fine, the request is not). */
export function toolError(text: string): ToolAnswer {
  return { content: [{ type: 'text', text }], isError: true };
}

export function textAnswer(text: string, structured: Record<string, unknown>): ToolAnswer {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * An operation submitted under another credential toward its upstream than the bridge holds now
 * (its upstream's headers changed since): nothing is sent, since the upstream would answer another
 * principal's task as not found (S8) and that answer would prove nothing.
 */
export function otherCredential(op: ToolOperation, tool: string): ToolAnswer {
  return toolError(
    `Operation ${op.id} (${tool}) was started under another credential toward its upstream ${op.server ?? '?'} ` +
      `than this bridge has now, so the bridge does not ask the upstream about it: nothing was sent and the ` +
      `operation is unchanged (${op.state}). Restart the bridge with the credential it was started with to follow it.`,
  );
}

/** Unknown, malformed and another caller's ids get the same answer: nothing about them leaks. */
export function unknownOperation(operationId: string): ToolAnswer {
  return toolError(
    `No operation ${JSON.stringify(operationId)} here: the id is unknown or not yours. ` +
      'Call terminus_operations to list the operations you can see; never guess an id.',
  );
}
