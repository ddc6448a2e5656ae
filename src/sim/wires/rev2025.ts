/**
 * MCP 2025-11-25 experimental tasks in the simulation: task-augmented `tools/call` (`params.task`,
 * no submission key: the server ignores ours), `tasks/get`, `tasks/result` (which blocks until
 * terminal and carries the input side channel: the server's `elicitation/create` requests arrive
 * while it is open, tagged with the related task) and `tasks/cancel` (`-32602` on a terminal task),
 * served by the legacy-era handlers (`createRev20251125Wire().install`).
 *
 * No key lookup exists on this wire (`terminus/tasks/lookup` is a modern-era method: `-32601`), so a
 * submission whose answer was lost ends UNKNOWN, listed for an operator; the checkers hold the
 * executor to exactly that (never NEVER_CREATED without a refusal, never a second submission).
 */
import { RpcErrorFailure } from '../../executor/adapters/rpc-error.js';
import {
  decodeCreate,
  decodeResult,
  decodeResultError,
  decodeStatus,
} from '../../executor/adapters/rev2025-11-25/codec.js';
import { createRev20251125Wire } from '../../executor/adapters/rev2025-11-25/index.js';
import { RELATED_TASK_META, REV_2025_REASONS } from '../../server/wire/rev2025-11-25/index.js';
import { decoded, normalizeResult, resultFields } from './payload.js';
import { canonicalJson } from '../../core/digest.js';
import type { AnswerFields, Classified, Role } from './spec.js';
import type { SimWire } from './wire.js';
import { taskObjectLies } from './lies.js';

const ROLES: Readonly<Record<string, Role>> = {
  'tools/call': 'submit',
  'tasks/get': 'status',
  'tasks/result': 'result',
  'tasks/cancel': 'cancel',
  'terminus/tasks/lookup': 'lookup',
};

/** Errors of `tasks/result` that are the wire's own, not the task's outcome. */
const WIRE_REASONS: readonly string[] = [REV_2025_REASONS.taskNotFound, REV_2025_REASONS.taskCancelled];

export const rev2025Sim: SimWire = {
  name: 'mcp-2025-11-25',
  transport: 'legacy',
  resultByStatus: false,
  inputRounds: true,
  keyLookup: false,
  failedMatch: 'code+message',
  notApplicable: {
    result_changed:
      'the result is read apart (tasks/result) and once: the executor accepts the first that verifies, and no later read can show it changed',
  },
  lies: taskObjectLies(false, RELATED_TASK_META),
  pushes: 'legacy',
  noDuplicate: {
    roles: ['submit'],
    reason:
      'a 2025-11-25 tools/call carries no idempotency key (the server ignores ours), so a create the transport delivered twice makes two tasks whatever the client does; HTTP and stdio never deliver a request twice by themselves',
  },
  unreachableStates: {
    NOT_FOUND_SAFE:
      'needs a key lookup proving a submission never arrived; this wire has none (lost submissions end UNKNOWN)',
    NEVER_CREATED:
      'needs a proof that nothing was created: a key lookup (none on this wire) or a refused call (the workload calls no tool the server refuses)',
  },

  classify(method, params): Classified {
    const role = ROLES[method] ?? 'other';
    if (role === 'submit') {
      const args = params.arguments as Record<string, unknown> | undefined;
      return { role, ...(typeof args?.op === 'string' ? { op: args.op } : {}) };
    }
    if (role === 'lookup')
      return typeof params.submissionKey === 'string' ? { role, key: params.submissionKey } : { role };
    return typeof params.taskId === 'string' ? { role, taskId: params.taskId } : { role };
  },

  retarget: (method, params, taskId) => ({ method, params: { ...params, taskId } }),

  answer(role, _method, params, result): AnswerFields {
    return decoded(() => {
      if (role === 'submit') {
        const created = decodeCreate(result);
        if (created.kind === 'immediate') {
          return { inline: true, status: 'completed', payload: canonicalJson(normalizeResult(created.result)) };
        }
        return created.kind === 'task' ? { taskId: created.taskId, status: created.status } : {};
      }
      if (role === 'result') return resultFields(decodeResult(result));
      if (role === 'status' || role === 'cancel') {
        const snapshot = decodeStatus(result, typeof params.taskId === 'string' ? params.taskId : '');
        return { taskId: snapshot.taskId, status: snapshot.status };
      }
      return {};
    });
  },

  errorAnswer(role, error) {
    if (role !== 'result') return null;
    const reason = (error.data as { reason?: unknown } | undefined)?.reason;
    if (typeof reason === 'string' && WIRE_REASONS.includes(reason)) return null;
    if (error.code === -32602 && reason === undefined) return null;
    // T-40: the JSON-RPC error of a failed task's tasks/result is its outcome, as the adapter reads it.
    return resultFields(decodeResultError(new RpcErrorFailure(error.code, error.message, error.data)));
  },

  client: (links) => createRev20251125Wire({ channel: links.channel, taskSupport: links.taskSupport, ...links.push }),
};
