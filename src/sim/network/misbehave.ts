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
import { isTerminal } from '../../core/task.js';
import type { FaultClass, MessageRule } from '../faults.js';
import { taskObjectLies, type LieShape } from '../wires/lies.js';
import type { Role } from '../wires/spec.js';
import type { SimWire } from '../wires/wire.js';

/** The misbehaviours, one fault class each (appended to `FAULT_CLASSES`). */
export const MISBEHAVIOURS = [
  'terminal_rewritten',
  'result_changed',
  'terminal_reverted',
  'late_completion_shown',
] as const satisfies readonly FaultClass[];

/** A read held by `late_completion_shown` is delivered this long after it was sent (the request timeout is 2 s). */
export const HELD_READ_MS = 1_900;

type Answer = Record<string, unknown>;
type Body = { readonly result: Answer } | { readonly error: { code: number; message: string; data?: unknown } };

/** One request as the network read it: what the lies are keyed on. */
export interface Asked {
  readonly role: Role;
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly op: string | null;
  readonly taskId: string | undefined;
}

/** A key lookup answers with the modern-era task object, whatever the wire (`terminus/tasks/lookup`). */
const LOOKUP = taskObjectLies(true);

/**
 * Answers that tell the client a task's status: status and result reads, and a cancel's answer
 * where it is the task after the cancel (2025-11-25, T-64; the Tasks extension's is empty).
 */
const TELLING: readonly Role[] = ['status', 'result', 'cancel'];

interface Lie {
  kind: 'rewritten' | 'changed' | 'reverted';
  /** Reads still to lie to (`reverted`); Infinity for the others. */
  left: number;
  reads: number;
}

/** One series' misbehaving answers, applied by the network to what the server computed. */
export class Misbehaviour {
  readonly #wire: SimWire;
  readonly #shape: LieShape;
  readonly #fire: (fault: FaultClass, op: string | null) => MessageRule | null;
  readonly #lies = new Map<string, Lie>();
  /** Operations whose cancel was sent, and tasks the client was shown `cancelled` for. */
  readonly #cancelSent = new Set<string>();
  readonly #shownCancelled = new Set<string>();
  /** Tasks a terminal answer was delivered for: the truth was told once. */
  readonly #toldTerminal = new Set<string>();

  constructor(wire: SimWire, shape: LieShape, fire: (fault: FaultClass, op: string | null) => MessageRule | null) {
    this.#wire = wire;
    this.#shape = shape;
    this.#fire = fire;
  }

  sent(role: Role, op: string | null): void {
    if (role === 'cancel' && op !== null) this.#cancelSent.add(op);
  }

  /** A status answer as the server computed it, with the lie armed for its task. */
  status(taskId: string, body: Body): Body {
    if (!('result' in body)) return body;
    const lie = this.#lies.get(taskId);
    // A misrouted request (task id misuse) is answered about another task: no lie of this one.
    if (lie === undefined || lie.left <= 0 || this.#named('status', body.result, taskId) !== taskId) return body;
    lie.left--;
    lie.reads++;
    return { result: this.#tell(lie, body.result) };
  }

  /**
   * An answer a live client received: the first terminal one (the truth, told once) arms a lie for
   * the reads after it; a changed result only where the status read carries it (a result read
   * apart is read once: `result_changed` does not apply there).
   * Armed on delivery, not when computed: an answer lost on the way told the client nothing, and a
   * lie after it would be the only report it ever saw.
   */
  delivered(asked: Asked, body: Body): void {
    const { role, op, taskId } = asked;
    if (!TELLING.includes(role) || taskId === undefined || !('result' in body)) return;
    if (this.#named(role, body.result, taskId) !== taskId) return;
    const status = this.#wire.answer(role, asked.method, asked.params, body.result).status;
    if (status === 'cancelled') this.#shownCancelled.add(taskId);
    if (status === undefined || !isTerminal(status) || this.#toldTerminal.has(taskId)) return;
    this.#toldTerminal.add(taskId);
    const done = status === 'completed' || status === 'failed';
    const withResult = status === 'completed' && this.#wire.resultByStatus;
    if (done && this.#fire('terminal_rewritten', op) !== null) {
      this.#lies.set(taskId, { kind: 'rewritten', left: Infinity, reads: 0 });
    } else if (withResult && this.#fire('result_changed', op) !== null) {
      this.#lies.set(taskId, { kind: 'changed', left: Infinity, reads: 0 });
    } else {
      const rule = this.#fire('terminal_reverted', op);
      if (rule !== null) this.#lies.set(taskId, { kind: 'reverted', left: Math.max(1, rule.arg), reads: 0 });
    }
  }

  /** A key lookup answer (`{ found, task }`): the same lie as the task's reads. */
  lookup(body: Body): Body {
    if (!('result' in body) || body.result.found !== true) return body;
    const task = body.result.task as Answer | undefined;
    const lie = task === undefined ? undefined : this.#lies.get(String(task.taskId));
    if (task === undefined || lie === undefined || lie.left <= 0) return body;
    lie.reads++;
    return { result: { ...body.result, task: this.#tell(lie, task, LOOKUP) } };
  }

  /**
   * `late_completion_shown`: a status read of `op` that reached the server while the task still
   * worked and before any cancel was sent is held until `HELD_READ_MS` after its send; when it
   * lands, the answer is a completion if the client was shown `cancelled` meanwhile. Null: no hold.
   */
  hold(asked: Asked, body: Body): ((b: Body) => Body) | null {
    const { role, op, taskId } = asked;
    if (role !== 'status' || op === null || taskId === undefined || !('result' in body)) return null;
    const status = this.#wire.answer(role, asked.method, asked.params, body.result).status;
    if (status !== 'working' || this.#cancelSent.has(op)) return null;
    if (this.#fire('late_completion_shown', op) === null) return null;
    return (delivered) => {
      if (!this.#shownCancelled.has(taskId) || !('result' in delivered)) return delivered;
      const late = { content: [{ type: 'text', text: 'completed late' }] };
      return { result: this.#shape.status(delivered.result, 'completed', late) };
    };
  }

  #named(role: Role, answer: Answer, asked: string): string | undefined {
    return this.#shape.named === undefined ? asked : this.#shape.named(role, answer);
  }

  #tell(lie: Lie, answer: Answer, shape = this.#shape): Answer {
    switch (lie.kind) {
      case 'rewritten':
        return shape.status(answer, 'cancelled', {});
      case 'reverted':
        return shape.status(answer, 'working', {});
      case 'changed':
        return shape.withResult(answer, (r) => {
          const content = Array.isArray(r.content) ? r.content : [];
          return { ...r, content: [...content, { type: 'text', text: `read ${lie.reads}` }] };
        });
    }
  }
}
