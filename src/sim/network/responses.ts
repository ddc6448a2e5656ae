/**
 * The response side of a request: the faults that hit an answer on its way back (lost, truncated,
 * an older snapshot replayed, a partition after the first terminal answer, the server's lies), and
 * the wire-log entry of an answer delivered.
 */
import { isTerminal } from '../../core/task.js';
import { LOOKUP_METHOD } from '../../executor/adapters/envelope.js';
import type { Role } from '../wires/spec.js';
import type { SimWire } from '../wires/wire.js';
import type { WireEvent } from './wire-log.js';
import type { Body, NetworkState } from './state.js';

/** Response-side faults; returns the body to deliver, 'lost' or 'truncated'. */
export function answerFaults(
  net: NetworkState,
  role: Role,
  method: string,
  params: Record<string, unknown>,
  op: string | null,
  taskId: string | undefined,
  body: Body,
): Body | 'lost' | 'truncated' {
  if (role === 'submit' && 'result' in body && net.fire('submit_response_lost', op) !== null) return 'lost';
  if (role === 'cancel' && net.fire('cancel_ack_lost', op) !== null) return 'lost';
  if (net.fire('drop', op) !== null) return 'lost';
  // A result read of its own (2025-11-25, SEP-1391): the result faults hit it directly.
  // Only an answer that carries the outcome: an error about the read itself (an expired
  // operation, say) carries no result to lose, as on the wires that read it with the status.
  const carries = 'result' in body || (net.wire.errorAnswer?.(role, body.error) ?? null) !== null;
  if (role === 'result' && taskId !== undefined && !net.wire.resultByStatus && carries) {
    if (net.fire('result_lost', op) !== null) return 'lost';
    if (net.fire('result_truncated', op) !== null) return 'truncated';
    return body;
  }
  if (method === LOOKUP_METHOD && net.lies !== null) return net.lies.lookup(body);
  if (role !== 'status' || taskId === undefined || !('result' in body)) return body;
  const named = net.wire.answer(role, method, params, body.result);
  // A read misrouted to another task (task id misuse) is an answer about that task, not this one:
  // counted as this task's first terminal answer, it made the real first one a second, open to the
  // result faults before the client had seen the task terminal (AIP-151 seed 6443: all three
  // truncations hit the only reads that could show `completed`).
  if (named.taskId !== undefined && named.taskId !== taskId) {
    return net.lies === null ? body : net.lies.status(taskId, body);
  }
  const memory = net.memory(taskId);
  const status = named.status;
  let out: Body = body;
  if (status !== undefined && isTerminal(status)) {
    memory.terminalAnswers++;
    if (memory.terminalAnswers === 1) {
      const partition = net.fire('not_found_after_expiry', op);
      if (partition !== null) {
        memory.partitionUntil = net.o.scope.now() + partition.arg;
        net.faultsOverAt = Math.max(net.faultsOverAt, memory.partitionUntil);
        net.o.log.partitions.push({ op, from: net.o.scope.now(), until: memory.partitionUntil });
      }
    } else if (net.wire.resultByStatus) {
      if (net.fire('result_lost', op) !== null) return 'lost';
      if (net.fire('result_truncated', op) !== null) return 'truncated';
    }
  } else if (memory.updateSent && memory.lastInputRequired !== undefined && status !== 'input_required') {
    if (net.fire('input_replay', op) !== null) out = memory.lastInputRequired;
  } else if (memory.last !== undefined && net.fire('poll_reorder', op) !== null) {
    out = memory.last;
  }
  if (status === 'input_required') memory.lastInputRequired = body;
  memory.last = body;
  return net.lies === null ? out : net.lies.status(taskId, out);
}

/** The wire-log entry of an answer delivered to a live client: an answer, an error, or a synchronous answer. */
export function answerEvent(
  wire: SimWire,
  at: number,
  id: number,
  op: string | null,
  role: Role,
  logMethod: string,
  method: string,
  params: Record<string, unknown>,
  taskId: string | undefined,
  body: Body,
): WireEvent {
  const base = { at, id, op, method: logMethod, ...(taskId === undefined ? {} : { taskId }) };
  if ('error' in body) {
    const fields = wire.errorAnswer?.(role, body.error) ?? null;
    if (fields !== null) return { ...base, kind: 'answer', ...fields };
    const reason = (body.error.data as { reason?: unknown } | undefined)?.reason;
    return { ...base, kind: 'error', ...(typeof reason === 'string' ? { reason } : {}) };
  }
  const { inline, ...fields } = wire.answer(role, method, params, body.result);
  // A synchronous answer names no task: the checkers tell it by the missing task id (C12).
  if (inline === true) {
    const { taskId: _t, ...rest } = base;
    return { ...rest, kind: 'answer', ...fields };
  }
  return { ...base, kind: 'answer', ...fields };
}
