/**
 * Servers that misbehave (C13): the server breaks its own rules in what it answers, as real peers
 * did. The store underneath stays correct (S2 holds there, and the checkers compare receipts with
 * it); only the answers lie, and only after the server already told the client the truth once, so
 * every lie is a terminal status or a result that changed after the client could observe it.
 *
 * - `terminal_rewritten`: a completed (or failed) task is reported `cancelled` from the next read on,
 *   as a peer that rewrote a completed task when it was cancelled afterwards (by anyone).
 * - `result_changed`: each later read of a completed task carries another result (its digest
 *   changes between reads), as a peer that recomputes the result on every read.
 * - `terminal_reverted`: a terminal task is reported `working` again for one or two reads.
 * - `late_completion_shown`: a status read that was on the wire when the cancel won is answered
 *   late, after the client was shown `cancelled`, with a completion (a replica that let the late
 *   outcome through).
 */
import type { FaultClass, MessageRule } from '../faults.js';

/** The misbehaviours, one fault class each (appended to `FAULT_CLASSES`). */
export const MISBEHAVIOURS = [
  'terminal_rewritten',
  'result_changed',
  'terminal_reverted',
  'late_completion_shown',
] as const satisfies readonly FaultClass[];

/** A read held by `late_completion_shown` is delivered this long after it was sent (the request timeout is 2 s). */
export const HELD_READ_MS = 1_900;

type Task = Record<string, unknown>;
type Body =
  { readonly result: Record<string, unknown> } | { readonly error: { code: number; message: string; data?: unknown } };

interface Lie {
  kind: 'rewritten' | 'changed' | 'reverted';
  /** Reads still to lie to (`reverted`); Infinity for the others. */
  left: number;
  reads: number;
}

/** One series' misbehaving answers, applied by the network to what the server computed. */
export class Misbehaviour {
  readonly #fire: (fault: FaultClass, op: string | null) => MessageRule | null;
  readonly #lies = new Map<string, Lie>();
  /** Operations whose cancel was sent, and tasks the client was shown `cancelled` for. */
  readonly #cancelSent = new Set<string>();
  readonly #shownCancelled = new Set<string>();
  /** Tasks a terminal status read was delivered for: the truth was told once. */
  readonly #toldTerminal = new Set<string>();

  constructor(fire: (fault: FaultClass, op: string | null) => MessageRule | null) {
    this.#fire = fire;
  }

  sent(method: string, op: string | null): void {
    if (method === 'tasks/cancel' && op !== null) this.#cancelSent.add(op);
  }

  /** A `tasks/get` answer (the task object) as the server computed it, with the lie armed for it. */
  status(taskId: string, body: Body): Body {
    if (!('result' in body)) return body;
    const lie = this.#lies.get(taskId);
    // A misrouted request (task id misuse) is answered about another task: no lie of this one.
    if (lie === undefined || lie.left <= 0 || body.result.taskId !== taskId) return body;
    lie.left--;
    lie.reads++;
    return { result: tell(lie, body.result) };
  }

  /**
   * A `tasks/get` answer a live client received: the first terminal one (the truth, told once)
   * arms a lie for the reads after it. Armed on delivery, not when computed: an answer lost on the
   * way told the client nothing, and a lie after it would be the only report it ever saw.
   */
  delivered(method: string, op: string | null, taskId: string | undefined, body: Body): void {
    if (method !== 'tasks/get' || taskId === undefined || !('result' in body)) return;
    if (body.result.taskId !== taskId) return;
    const status = body.result.status;
    if (status === 'cancelled') this.#shownCancelled.add(taskId);
    if (status !== 'completed' && status !== 'failed' && status !== 'cancelled') return;
    if (this.#toldTerminal.has(taskId) || this.#lies.has(taskId)) return;
    this.#toldTerminal.add(taskId);
    this.#arm(op, taskId, body.result);
  }

  /** A key lookup answer (`{ found, task }`): the same lie as the task's reads. */
  lookup(body: Body): Body {
    if (!('result' in body) || body.result.found !== true) return body;
    const task = body.result.task as Task | undefined;
    const lie = task === undefined ? undefined : this.#lies.get(String(task.taskId));
    if (task === undefined || lie === undefined || lie.left <= 0) return body;
    lie.reads++;
    return { result: { ...body.result, task: tell(lie, task) } };
  }

  /**
   * `late_completion_shown`: a status read of `op` that reached the server while the task still
   * worked and before any cancel was sent is held until `HELD_READ_MS` after its send; when it
   * lands, the answer is a completion if the client was shown `cancelled` meanwhile. Null: no hold.
   */
  hold(method: string, op: string | null, taskId: string | undefined, body: Body): ((b: Body) => Body) | null {
    if (method !== 'tasks/get' || op === null || taskId === undefined || !('result' in body)) return null;
    if (body.result.status !== 'working' || this.#cancelSent.has(op)) return null;
    if (this.#fire('late_completion_shown', op) === null) return null;
    return (delivered) => {
      if (!this.#shownCancelled.has(taskId) || !('result' in delivered)) return delivered;
      const { error: _e, ...rest } = delivered.result;
      return {
        result: { ...rest, status: 'completed', result: { content: [{ type: 'text', text: 'completed late' }] } },
      };
    };
  }

  #arm(op: string | null, taskId: string, task: Task): void {
    const done = task.status === 'completed' || task.status === 'failed';
    if (done && this.#fire('terminal_rewritten', op) !== null) {
      this.#lies.set(taskId, { kind: 'rewritten', left: Infinity, reads: 0 });
    } else if (task.status === 'completed' && this.#fire('result_changed', op) !== null) {
      this.#lies.set(taskId, { kind: 'changed', left: Infinity, reads: 0 });
    } else {
      const rule = this.#fire('terminal_reverted', op);
      if (rule !== null) this.#lies.set(taskId, { kind: 'reverted', left: Math.max(1, rule.arg), reads: 0 });
    }
  }
}

function tell(lie: Lie, task: Task): Task {
  const { result, error: _error, ...rest } = task;
  switch (lie.kind) {
    case 'rewritten':
      return { ...rest, status: 'cancelled', statusMessage: 'cancelled' };
    case 'reverted':
      return { ...rest, status: 'working' };
    case 'changed': {
      const r = (result ?? {}) as Record<string, unknown>;
      const content = Array.isArray(r.content) ? r.content : [];
      return { ...task, result: { ...r, content: [...content, { type: 'text', text: `read ${lie.reads}` }] } };
    }
  }
}
