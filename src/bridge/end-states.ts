/**
 * What the model is told about an operation in each local state: one table, every state listed
 * (docs/hosts.md, "What the model is told when an operation ends"). `going`: the work goes on and
 * `terminus_wait` waits for it; `result`: its receipt is the answer (the tool's result, its failure,
 * its cancel); `ended`: it settled or fell in doubt without a result to wait for, and every answer
 * (the call, `terminus_wait`, `terminus_status`, `terminus_cancel`) says at once what happened, that
 * waiting will not change it, and what to do instead.
 */
import type { Receipt } from '../executor/ledger-port.js';
import type { Evidence, LocalState, ToolOperation } from '../executor/operation.js';

/** What an `ended` answer is written from. */
export interface EndFacts {
  readonly op: ToolOperation;
  /** The tool name as the host sees it. */
  readonly tool: string;
  readonly receipt: Receipt | null;
}

export interface EndWording {
  readonly phase: 'ended';
  /** A few words for `terminus_operations`. */
  readonly label: string;
  /** `structuredContent.next`: `operator` (a person must look), `none` (nothing is pending). */
  readonly next: 'operator' | 'none';
  /** What happened, what waiting does, what to do: the lines of the answer. */
  readonly text: (facts: EndFacts) => readonly string[];
  /** Why `terminus_cancel` sends nothing for it, and its `structuredContent.cancel`. */
  readonly cancel: string;
  readonly cancelOutcome: 'not_sent' | 'already_ended';
}

export type StateWording = { readonly phase: 'going' } | { readonly phase: 'result' } | EndWording;

const GOING = { phase: 'going' } as const;
const RESULT = { phase: 'result' } as const;

const ref = (op: ToolOperation): string => JSON.stringify({ operation: op.id });
const show = (op: ToolOperation): string => `\`terminus ops show ${op.id}\` on the bridge's ledger (its --ledger)`;

/** Why an operation is in doubt, in plain words, by evidence kind (`cause`: it can explain the doubt). */
const EVIDENCE: Record<Evidence['kind'], { readonly cause: boolean; readonly words: string }> = {
  submit_lost: {
    cause: true,
    words: 'the answer to its submission was lost, so whether the server created the task cannot be told',
  },
  plain_call_lost: {
    cause: true,
    words:
      'the tool was called without a task and its answer was lost: it may have run, and the server cannot be asked',
  },
  plain_call_sent: { cause: false, words: 'the tool makes no task and was called plainly' },
  key_lookup_unsupported: {
    cause: false,
    words: "the server cannot look a task up by the call's submission key, so asking it cannot settle the doubt",
  },
  not_found: {
    cause: true,
    words:
      'the server no longer answers for its task: it answers "not found" for a task it had acknowledged ' +
      '(it may have restarted and lost its tasks)',
  },
  result_unverifiable: { cause: true, words: 'its result could not be verified (truncated, malformed or altered)' },
  result_status_mismatch: {
    cause: true,
    words: "the server's answers contradicted themselves: its result contradicts the status it reported",
  },
  never_created_after_ack: {
    cause: true,
    words: 'the server now says it never created a task it had acknowledged',
  },
  late_completion: { cause: true, words: 'the server reported the work finished after it had confirmed the cancel' },
  submit_rejected: { cause: true, words: 'the server refused the call' },
  input_asked_again: {
    cause: true,
    words: 'the server asked a question again after it was declined (or asked without end): nothing was created',
  },
  task_id_replaced: { cause: false, words: 'the server named the task by another id' },
  terminal_status_changed: {
    cause: true,
    words: "the server's answers contradicted themselves: it reported another end after one was observed",
  },
  result_changed: {
    cause: true,
    words: "the server's answers contradicted themselves: a result read again differed from the first",
  },
};

/** The newest evidence that explains the doubt, in words with its detail; and whether the key cannot be looked up. */
function reasonOf(op: ToolOperation): string {
  const causes = op.evidence.filter((e) => EVIDENCE[e.kind].cause);
  const cause = causes[causes.length - 1];
  if (cause === undefined) return 'the bridge has no more evidence than that';
  const words = `${EVIDENCE[cause.kind].words} (${cause.detail})`;
  const noLookup = op.evidence.some((e) => e.at >= cause.at && e.kind === 'key_lookup_unsupported');
  return noLookup ? `${words}; and ${EVIDENCE.key_lookup_unsupported.words}` : words;
}

const UNKNOWN: EndWording = {
  phase: 'ended',
  label: 'outcome unknown, needs an operator',
  next: 'operator',
  text: ({ op, tool }) => [
    `${tool} (operation ${op.id}): its outcome is unknown. Why: ${reasonOf(op)}.`,
    'It may have run in full, in part or not at all; the bridge will not run it again by itself.',
    'Waiting will not change this: terminus_wait answers at once for it, and calling it again (the same tool ' +
      'with the same arguments) attaches to this operation, it never starts a second one.',
    `What to do: terminus_status ${ref(op)} gives this answer (state and evidence) again without waiting. ` +
      'terminus_cancel cannot stop it: the ' +
      'bridge sends a cancel only for a task the server answers for. Tell the user: an operator has to reconcile it ' +
      `(check on the server whether it ran, stop it there if it may still run); ${show(op)} has the record, the ` +
      'evidence and the history, and `terminus ops reconcile` lists every operation in doubt.',
  ],
  cancel:
    'nothing was sent: the outcome of this operation is unknown, and the bridge cancels only a task the server answers for',
  cancelOutcome: 'not_sent',
};

function observedStatusOf(receipt: Receipt | null): string | null {
  const payload = receipt?.payload as { observedStatus?: unknown } | null | undefined;
  return typeof payload?.observedStatus === 'string' ? payload.observedStatus : null;
}

/** Every local state: how the model is told about it. */
export const STATE_WORDING = {
  SUBMITTING: GOING,
  WORKING: GOING,
  INPUT_REQUIRED: GOING,
  // The answer to the submission was lost: the executor asks by the submission key (waiting helps).
  SUBMISSION_UNKNOWN: GOING,
  // Proven never created: the executor submits it again under a new key.
  NOT_FOUND_SAFE: GOING,
  CANCEL_REQUESTED: GOING,
  // The task ended; its result is being fetched.
  TERMINAL_OBSERVED: GOING,
  FETCHING_RESULT: GOING,
  ACCEPTED: RESULT,
  CANCELLED_ACCEPTED: RESULT,
  UNKNOWN,
  NEVER_CREATED: {
    phase: 'ended',
    label: 'never created, nothing ran',
    next: 'none',
    text: ({ op, tool }) => [
      `${tool} (operation ${op.id}) never ran: the server did not create it. Why: ${reasonOf(op)}.`,
      'Nothing is pending and waiting will not change this. Calling the tool again (after fixing what the reason ' +
        `names, if it is the arguments) starts a new operation. ${show(op)} has the details.`,
    ],
    cancel: 'nothing to cancel: it never ran',
    cancelOutcome: 'already_ended',
  },
  EXPIRED_WITH_RECEIPT: {
    phase: 'ended',
    label: 'ended, result expired unread',
    next: 'none',
    text: ({ op, tool, receipt }) => {
      const status = observedStatusOf(receipt);
      return [
        `${tool} (operation ${op.id}) ended on the server${status === null ? '' : ` (it reported ${status})`}, but its ` +
          'result expired there before the bridge read it: the result is lost.',
        'Waiting will not bring it back, and the bridge will not run it again by itself. Calling the tool again ' +
          'starts a new run (its effects would happen twice): ask the user first. ' +
          `${show(op)} has the details.`,
      ];
    },
    cancel: 'nothing to cancel: it had already ended',
    cancelOutcome: 'already_ended',
  },
  EFFECT_RECONCILIATION_REQUIRED: {
    phase: 'ended',
    label: 'cancelled, but may have had effects: needs an operator',
    next: 'operator',
    text: ({ op, tool }) => [
      `${tool} (operation ${op.id}) was cancelled (the server confirmed it), but ${reasonOf(op)}: its work may have ` +
        'had effects after the cancel. Its result is not accepted.',
      'Waiting will not change this. Tell the user: an operator has to check those effects on the server; ' +
        `${show(op)} has the record, the evidence and the history.`,
    ],
    cancel: 'nothing to cancel: it was cancelled already',
    cancelOutcome: 'already_ended',
  },
} as const satisfies Record<LocalState, StateWording>;

export function wordingOf(state: LocalState): StateWording {
  return STATE_WORDING[state];
}

/** The wording of an operation that ended without a result to wait for, or null while it goes on or has one. */
export function endOf(state: LocalState): EndWording | null {
  const wording = wordingOf(state);
  return wording.phase === 'ended' ? wording : null;
}

/** The lines of an `ended` answer, as one text. */
export function endText(wording: EndWording, facts: EndFacts): string {
  return wording.text(facts).join('\n');
}
