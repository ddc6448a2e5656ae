import type { Role } from './spec.js';

type Answer = Record<string, unknown>;

/**
 * How a server of one wire tells the lies of C13 (`network/misbehave.ts`): which task an answer
 * names, and how a status answer or a result reads once rewritten. A wire without one tells none.
 */
export interface LieShape {
  /**
   * The task an answer of `role` names itself (a misrouted read names another one). Absent: the
   * wire's answers name no task, and no fault misroutes its reads (SEP-1391).
   */
  named?(role: Role, answer: Answer): string | undefined;
  /** A status answer reporting `status` instead: its outcome dropped, a completion carrying `result`. */
  status(answer: Answer, status: 'cancelled' | 'working' | 'completed', result: Answer): Answer;
  /** The answer that carries the result (the status answer where it is read with it), with `change` applied. */
  withResult(answer: Answer, change: (result: Answer) => Answer): Answer;
}

/**
 * The MCP task object of `tasks/get` (Tasks extension and 2025-11-25), with the result inlined in
 * it (`inlined`, the Tasks extension) or read apart by `tasks/result`, whose answer names its task
 * in the related-task `_meta` (2025-11-25, T-41).
 */
export function taskObjectLies(inlined: boolean, relatedTaskMeta?: string): LieShape {
  return {
    named(role, answer) {
      if (role === 'result' && relatedTaskMeta !== undefined) {
        const related = (answer._meta as Answer | undefined)?.[relatedTaskMeta] as Answer | undefined;
        return typeof related?.taskId === 'string' ? related.taskId : undefined;
      }
      return typeof answer.taskId === 'string' ? answer.taskId : undefined;
    },
    status(answer, status, result) {
      const { result: _result, error: _error, ...rest } = answer;
      if (status === 'cancelled') return { ...rest, status, statusMessage: 'cancelled' };
      if (status === 'completed' && inlined) return { ...rest, status, result };
      return { ...rest, status };
    },
    withResult: (answer, change) =>
      inlined ? { ...answer, result: change((answer.result ?? {}) as Answer) } : change(answer),
  };
}
