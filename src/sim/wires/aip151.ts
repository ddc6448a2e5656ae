/**
 * AIP-151 long-running operations in the simulation: `POST /v1/tools/{tool}:run` (`requestId` = our
 * submission key), `GET /v1/operations/{id}` (status and result), `POST /v1/operations/{id}:cancel`,
 * served by the real routes (`aipRoutes`), over HTTP requests the network carries as
 * `VERB /path` with the JSON body as params. Key lookup: `terminus/tasks/lookup` on the same server's
 * modern-era MCP endpoint, with the same owner, as `connectServer` sets it up.
 */
import { createAip151Wire } from '../../executor/adapters/aip-151/index.js';
import {
  CANCELLED_CODE,
  decodeOperation,
  OPERATION_PREFIX,
  toResult,
  toSnapshot,
} from '../../executor/adapters/aip-151/codec.js';
import { decoded, resultFields } from './payload.js';
import type { AnswerFields, Classified } from './spec.js';
import type { SimWire } from './wire.js';
import type { LieShape } from './lies.js';

/** Origin the simulated client addresses; the network routes it to the simulated server. */
export const SIM_ORIGIN = 'http://sim.invalid';

/** `VERB /path` of one HTTP request in the network. */
export function httpMethod(verb: string, path: string): string {
  return `${verb} ${path}`;
}

function parse(method: string): { verb: string; path: string } {
  const space = method.indexOf(' ');
  return { verb: method.slice(0, space), path: method.slice(space + 1) };
}

const OPERATION = /^\/v1\/operations\/([^/:]+)(?::(\w+))?$/;

/** The server's lies on an Operation, whose `done` decides between `error` and `response` (G-20). */
const LIES: LieShape = {
  named: (_role, answer) =>
    typeof answer.name === 'string' && answer.name.startsWith(OPERATION_PREFIX)
      ? answer.name.slice(OPERATION_PREFIX.length)
      : undefined,
  status(answer, status, result) {
    const { response: _response, error: _error, done: _done, ...rest } = answer;
    const metadata = { ...(answer.metadata as Record<string, unknown> | undefined), status };
    if (status === 'cancelled') {
      return { ...rest, metadata, done: true, error: { code: CANCELLED_CODE, message: 'cancelled' } };
    }
    if (status === 'completed') return { ...rest, metadata, done: true, response: result };
    return { ...rest, metadata, done: false };
  },
  withResult: (answer, change) => ({ ...answer, response: change((answer.response ?? {}) as Record<string, unknown>) }),
};

export const aip151Sim: SimWire = {
  name: 'aip-151',
  transport: 'http',
  resultByStatus: true,
  inputRounds: false,
  keyLookup: true,
  failedMatch: 'code+message',
  notApplicable: {
    input_replay: 'AIP-151 operations take no input (no input rounds on the wire), so there is no round to replay',
  },
  unreachableStates: {
    INPUT_REQUIRED: 'AIP-151 operations take no input, so the workload asks for none',
  },
  lies: LIES,

  classify(method, params): Classified {
    if (method === 'terminus/tasks/lookup') {
      return typeof params.submissionKey === 'string'
        ? { role: 'lookup', key: params.submissionKey }
        : { role: 'lookup' };
    }
    const { verb, path } = parse(method);
    if (verb === 'POST' && path.startsWith('/v1/tools/')) {
      const args = params.arguments as Record<string, unknown> | undefined;
      return {
        role: 'submit',
        ...(typeof args?.op === 'string' ? { op: args.op } : {}),
        ...(typeof params.requestId === 'string' ? { key: params.requestId } : {}),
      };
    }
    const match = OPERATION.exec(path);
    if (match === null) return { role: 'other' };
    const taskId = decodeURIComponent(match[1] as string);
    if (verb === 'GET' && match[2] === undefined) return { role: 'status', taskId };
    if (verb === 'POST' && match[2] === 'cancel') return { role: 'cancel', taskId };
    return { role: 'other', taskId };
  },

  retarget(method, params, taskId) {
    const { verb, path } = parse(method);
    const rest = path.replace(OPERATION, (_all, _id, v?: string) => (v === undefined ? '' : `:${v}`));
    return { method: httpMethod(verb, `/v1/operations/${encodeURIComponent(taskId)}${rest}`), params };
  },

  answer(role, _method, _params, result): AnswerFields {
    if (role !== 'submit' && role !== 'status') return {};
    return decoded(() => {
      const op = decodeOperation(result);
      const status = toSnapshot(op).status;
      if (!op.done) return { taskId: op.id, status };
      return { taskId: op.id, ...resultFields(toResult(op)) };
    });
  },

  client: (links) =>
    createAip151Wire({
      baseUrl: SIM_ORIGIN,
      clock: links.clock,
      fetch: links.fetch,
      lookup: links.modern,
      // The network times a request out itself (2 s, as on the MCP wires); this bound is never met first.
      timeoutMs: 30_000,
    }),
};
