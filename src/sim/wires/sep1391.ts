/**
 * SEP-1391 async tools in the simulation: `tools/call` with `operation.token` = our submission key,
 * `tools/async/status`, `tools/async/result` and our `tools/async/cancel`, served by the legacy-era
 * handlers with the SEP-1391 extension (`sep1391ToolExtension`, `sep1391Wire.install`) to a client
 * that declared the L-06 flag. Key lookup: `terminus/tasks/lookup` is modern-era only (`-32601`),
 * so the adapter asks `tools/async/status` with the key as token, which burns an unused key (S6).
 *
 * The client asks a retention (`keepAlive`) of 60 s after completion (no read grace follows it, S7),
 * so the expiry fault (a client cut off for 75 s after the terminal status) meets an expired
 * operation here as on the other wires, while every other wait of the workload (a 30 s poll
 * interval, a 20 s disconnect) stays inside the retention.
 */
import { decodeAccepted, decodeResult, decodeStatus, outcomeOfStatus } from '../../executor/adapters/sep-1391/codec.js';
import { createSep1391Wire } from '../../executor/adapters/sep-1391/index.js';
import { canonicalJson } from '../../core/digest.js';
import { decoded, normalizeResult, resultFields } from './payload.js';
import type { AnswerFields, Classified, Role } from './spec.js';
import type { SimWire } from './wire.js';
import type { LieShape } from './lies.js';

const ROLES: Readonly<Record<string, Role>> = {
  'tools/call': 'submit',
  'tools/async/status': 'status',
  'tools/async/result': 'result',
  'tools/async/cancel': 'cancel',
  'terminus/tasks/lookup': 'lookup',
};

/**
 * The server's lies on `tools/async/status` (`{ status, error? }`, L-11); its answers name no
 * operation, and no fault misroutes a read here (`task_id_misuse` is not applied). Only the late
 * completion can be heard here (`AFTER_TERMINAL`).
 */
const LIES: LieShape = {
  status(answer, status) {
    const { error: _error, ...rest } = answer;
    return { ...rest, status: status === 'cancelled' ? 'canceled' : status };
  },
  withResult: (answer, change) => ({ ...answer, result: change((answer.result ?? {}) as Record<string, unknown>) }),
};

/** Why a lie told to the status reads after a terminal one cannot be heard on this wire. */
const AFTER_TERMINAL =
  'no status read follows a terminal one on SEP-1391: the executor then reads only the result (tools/async/result), and no side channel shows the task terminal before its own read (none was told in 600 series restricted to the lies)';

/** The retention the simulated client asks for, seconds after completion (L-08, L-21). */
export const SIM_KEEP_ALIVE_S = 60;

export const sep1391Sim: SimWire = {
  name: 'sep-1391',
  transport: 'legacy',
  resultByStatus: false,
  inputRounds: false,
  keyLookup: true,
  failedMatch: 'message',
  notApplicable: {
    event_stream_cut:
      'SEP-1391 has no ordered task events (terminus/tasks/events is on the two MCP wires and AIP-151): a reader on it keeps polling the status',
    result_changed:
      'the result is read apart (tools/async/result) and once: the executor accepts the first that verifies, and no later read can show it changed',
    terminal_rewritten: AFTER_TERMINAL,
    terminal_reverted: AFTER_TERMINAL,
    task_id_misuse:
      "SEP-1391 status and result answers do not name the operation they are about, so a read misrouted to another operation's token is, for any client, a true answer about its own: no client can tell, so no checker can hold it to",
    not_found_before_expiry:
      'a status read and a key lookup are the same request on SEP-1391 (tools/async/status naming the token, which is our submission key), and invalid_token for it is the proof that nothing was created (S6): a server that answers it for a token it holds breaks S6 itself (a misbehaving server, issue 17 item 3), not the network',
    input_replay:
      'the SEP-1391 client adapter answers no input rounds (server requests flushed while polling, L-20, are not supported), so the workload asks for none and there is no round to replay',
  },
  unreachableStates: {
    INPUT_REQUIRED: 'the SEP-1391 client adapter answers no input rounds, so the workload asks for none',
  },
  lies: LIES,

  classify(method, params, resolve): Classified {
    const role = ROLES[method] ?? 'other';
    if (role === 'submit') {
      const args = params.arguments as Record<string, unknown> | undefined;
      const token = (params.operation as Record<string, unknown> | undefined)?.token;
      return {
        role,
        ...(typeof args?.op === 'string' ? { op: args.op } : {}),
        ...(typeof token === 'string' ? { key: token } : {}),
      };
    }
    if (role === 'lookup')
      return typeof params.submissionKey === 'string' ? { role, key: params.submissionKey } : { role };
    if (typeof params.token !== 'string') return { role };
    // A token is a task id or a submission key (the server resolves it in that order).
    const taskId = resolve(params.token);
    return taskId === undefined ? { role, key: params.token } : { role, taskId, key: params.token };
  },

  retarget: (method, params, taskId) => ({ method, params: { ...params, token: taskId } }),

  answer(role, _method, params, result): AnswerFields {
    return decoded(() => {
      if (role === 'submit') {
        const accepted = decodeAccepted(result);
        if (accepted.kind === 'immediate') {
          return { inline: true, status: 'completed', payload: canonicalJson(normalizeResult(accepted.result)) };
        }
        return accepted.kind === 'task' ? { status: accepted.status } : {};
      }
      if (role === 'result') return resultFields(decodeResult(result));
      if (role === 'status' || role === 'cancel') {
        const snapshot = decodeStatus(result, typeof params.token === 'string' ? params.token : '');
        // A failed status is the failure's only delivery on this wire (L-11): its payload, as read.
        const outcome = outcomeOfStatus(snapshot.status, snapshot.statusMessage);
        return outcome === null ? { status: snapshot.status } : resultFields(outcome);
      }
      return {};
    });
  },

  client: (links) => createSep1391Wire({ channel: links.channel, keepAliveS: SIM_KEEP_ALIVE_S }),
};
