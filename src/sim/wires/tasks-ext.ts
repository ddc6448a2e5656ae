/**
 * The Tasks extension (2026-07-28) in the simulation: `tools/call` with our submission key in
 * `_meta`, `tasks/get` (status, and the result once terminal), `tasks/update`, `tasks/cancel` and
 * `terminus/tasks/lookup`, served by the modern-era handlers (`installTaskMethods`).
 */
import { canonicalJson } from '../../core/digest.js';
import type { TaskStatus } from '../../core/task.js';
import { LOOKUP_METHOD, SUBMISSION_KEY_META } from '../../executor/adapters/envelope.js';
import { EVENTS_METHOD } from '../../executor/adapters/events.js';
import { taskObjectLies } from './lies.js';
import { normalizeResult } from './payload.js';
import type { AnswerFields, Classified, Role } from './spec.js';
import type { SimWire } from './wire.js';

const ROLES: Readonly<Record<string, Role>> = {
  'tools/call': 'submit',
  'tasks/get': 'status',
  'tasks/cancel': 'cancel',
  'tasks/update': 'input',
  [LOOKUP_METHOD]: 'lookup',
};

export const tasksExtSim: SimWire = {
  name: 'mcp-tasks-ext',
  transport: 'modern',
  resultByStatus: true,
  inputRounds: true,
  keyLookup: true,
  failedMatch: 'code+message',
  notApplicable: {},
  unreachableStates: {},
  lies: taskObjectLies(true),
  pushes: 'modern',

  classify(method, params): Classified {
    const role = ROLES[method] ?? 'other';
    if (role === 'submit') {
      const args = params.arguments as Record<string, unknown> | undefined;
      const key = (params._meta as Record<string, unknown> | undefined)?.[SUBMISSION_KEY_META];
      return {
        role,
        ...(typeof args?.op === 'string' ? { op: args.op } : {}),
        ...(typeof key === 'string' ? { key } : {}),
      };
    }
    if (role === 'lookup')
      return typeof params.submissionKey === 'string' ? { role, key: params.submissionKey } : { role };
    return typeof params.taskId === 'string' ? { role, taskId: params.taskId } : { role };
  },

  retarget: (method, params, taskId) => ({ method, params: { ...params, taskId } }),

  answer(_role, method, _params, r): AnswerFields {
    // An events page asks the questions its `input_requested` events carry (the executor's driver
    // takes an input round from them, issue 32); its status is no task object's, so none is logged.
    if (method === EVENTS_METHOD) return eventsAnswer(r);
    const task = (r.task as Record<string, unknown> | undefined) ?? r;
    // A call answered synchronously (no task, C12): its CallToolResult is a completed payload.
    if (method === 'tools/call' && r.resultType !== 'task' && Array.isArray(r.content)) {
      return { inline: true, status: 'completed', payload: canonicalJson(normalizeResult(r)) };
    }
    const status = task.status as TaskStatus | undefined;
    const payload =
      status === 'completed'
        ? canonicalJson(normalizeResult(task.result))
        : status === 'failed'
          ? canonicalJson(task.error)
          : undefined;
    const inputs = task.inputRequests as Record<string, unknown> | undefined;
    return {
      ...(typeof task.taskId === 'string' ? { taskId: task.taskId } : {}),
      ...(status === undefined ? {} : { status }),
      ...(payload === undefined ? {} : { payload }),
      ...(inputs === undefined ? {} : { keys: Object.keys(inputs) }),
    };
  },

  inputKeys(method, params) {
    if (method !== 'tasks/update') return undefined;
    const responses = params.inputResponses;
    return responses !== null && typeof responses === 'object' ? Object.keys(responses) : undefined;
  },
};

/** The task an events page is about, and the input keys its events ask. */
function eventsAnswer(r: Record<string, unknown>): AnswerFields {
  const events = Array.isArray(r.events) ? (r.events as Record<string, unknown>[]) : [];
  const keys = events.flatMap((e) => (e.kind === 'input_requested' && typeof e.key === 'string' ? [e.key] : []));
  return {
    ...(typeof r.taskId === 'string' ? { taskId: r.taskId } : {}),
    ...(keys.length === 0 ? {} : { keys }),
  };
}
