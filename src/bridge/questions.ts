/**
 * Input rounds of upstream tasks (C10), held until someone answers: the executor's approval gate
 * puts each request here; an elicitation-capable host waiting on the operation is asked at once,
 * otherwise `terminus_respond` answers it. Each question is bound to its operation, round and key:
 * an answer to a question that was already answered (or belongs to an older round) is refused.
 */
import { inputRequired } from '@modelcontextprotocol/server';
import type { ApprovalRequest } from '../executor/executor-types.js';

export interface Question {
  readonly operationId: string;
  readonly round: number;
  readonly key: string;
  /** The `elicitation/create` params the upstream sent (message, requestedSchema). */
  readonly params: Record<string, unknown>;
  readonly message: string;
}

interface Open extends Question {
  resolve(reply: unknown): void;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The elicitation params inside a server request (`{ method, params }` or the params themselves). */
export function elicitationParams(request: unknown): Record<string, unknown> {
  if (isRecord(request) && isRecord(request.params)) return request.params;
  return isRecord(request) ? request : { message: JSON.stringify(request) };
}

export class Questions {
  private readonly open = new Map<string, Open>();
  private readonly listeners = new Set<(question: Question) => void>();
  private readonly answeredListeners = new Set<(question: Question) => void>();

  /** The executor's approval gate: resolves with the reply once someone answers. */
  readonly gate = (request: ApprovalRequest): Promise<unknown> =>
    new Promise((resolve) => {
      const params = elicitationParams(request.request);
      const question: Open = {
        operationId: request.operationId,
        round: request.round,
        key: request.key,
        params,
        message: typeof params.message === 'string' ? params.message : 'The tool asks for input',
        resolve,
      };
      // A newer round of the same operation supersedes what is still open of older ones.
      for (const [id, q] of this.open) {
        if (q.operationId === request.operationId && q.round < request.round) this.open.delete(id);
      }
      this.open.set(idOf(question), question);
      for (const listener of this.listeners) listener(question);
    });

  /** Questions of an operation nobody has answered yet, oldest first. */
  pending(operationId: string): Question[] {
    return [...this.open.values()].filter((q) => q.operationId === operationId);
  }

  /** Answers one question; false when it is no longer open (answered, superseded). */
  answer(question: Question, reply: unknown): boolean {
    const id = idOf(question);
    const open = this.open.get(id);
    if (open === undefined || open.round !== question.round) return false;
    this.open.delete(id);
    open.resolve(reply);
    for (const listener of this.answeredListeners) listener(open);
    return true;
  }

  /** Called after each answer is taken (the task leaves `input_required` once none is open). */
  onAnswered(listener: (question: Question) => void): () => void {
    this.answeredListeners.add(listener);
    return () => this.answeredListeners.delete(listener);
  }

  onQuestion(listener: (question: Question) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

const idOf = (q: Question): string => `${q.operationId}\u0000${q.round}\u0000${q.key}`;

type ElicitSchema = Parameters<typeof inputRequired.elicit>[0]['requestedSchema'];

/** The `inputRequests` key of a question: its round and the upstream's key, so an old round's answer never matches. */
export function questionKey(q: Question): string {
  return `r${q.round}-${q.key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** The open questions as an `input_required` result (2026-07-28 multi-round trip), keyed by `questionKey`. */
export function askByResult(pending: readonly Question[]): Record<string, unknown> {
  return inputRequired({
    inputRequests: Object.fromEntries(
      pending.map((q) => [
        questionKey(q),
        inputRequired.elicit({
          message: q.message,
          requestedSchema: (q.params.requestedSchema ?? { type: 'object', properties: {} }) as ElicitSchema,
        }),
      ]),
    ),
  });
}
