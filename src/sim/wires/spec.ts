/**
 * The wire dimension of the simulation: what the in-process network, the server host and the
 * checkers need to know about one wire, so that the same series generator and checkers drive the
 * executor over each wire against that wire's real server adapter.
 *
 * The network sees a wire's own messages (JSON-RPC methods, or AIP-151 HTTP routes) and asks the
 * wire's spec what each one is: its role (submit, status read, result read, cancel, input reply, key
 * lookup) and the task, key or call node it names. Faults and the wire log are keyed on that role;
 * the log names each request by the Tasks-extension method of the same role (`tools/call`,
 * `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/update`, `terminus/tasks/lookup`), so the
 * checkers read one vocabulary whatever the wire.
 */
import type { FaultClass } from '../faults.js';
import type { TaskStatus } from '../../core/task.js';

export const SIM_WIRES = ['mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'] as const;
export type SimWireName = (typeof SIM_WIRES)[number];

export function isSimWire(value: string): value is SimWireName {
  return (SIM_WIRES as readonly string[]).includes(value);
}

/** What a request does, whatever the wire calls it. */
export type Role = 'submit' | 'status' | 'result' | 'cancel' | 'input' | 'lookup' | 'other';

/** The Tasks-extension method of each role: the one vocabulary of the wire log. */
export const LOG_METHOD: Readonly<Record<Role, string>> = {
  submit: 'tools/call',
  status: 'tasks/get',
  result: 'tasks/result',
  cancel: 'tasks/cancel',
  input: 'tasks/update',
  lookup: 'terminus/tasks/lookup',
  other: 'other',
};

/** What the network reads off one request. */
export interface Classified {
  readonly role: Role;
  /** The server task id the request names (a SEP-1391 token resolved to it), if any. */
  readonly taskId?: string;
  /** The submission key it carries or names. */
  readonly key?: string;
  /** The call node (the sim tool's `op` argument) of a submission. */
  readonly op?: string;
}

/** Log fields of one answer the client received. */
export interface AnswerFields {
  readonly taskId?: string;
  readonly status?: TaskStatus;
  /** Canonical JSON of the terminal payload as the client adapter decodes it (C2). */
  readonly payload?: string;
  readonly keys?: readonly string[];
  /** The call was answered synchronously (C12). */
  readonly inline?: boolean;
}

/** How the simulation reaches the server for one wire. */
export type Transport = 'modern' | 'legacy' | 'http';

export interface SimWireSpec {
  readonly name: SimWireName;
  readonly transport: Transport;
  /** Input rounds the client adapter can answer; false: the workload asks for none. */
  readonly inputRounds: boolean;
  /** The result is read with the status request (`tasks/get`, `GET /v1/operations/{id}`), not one of its own. */
  readonly resultByStatus: boolean;
  /** The server answers a submission-key lookup on this wire (SUBMISSION_UNKNOWN can be settled). */
  readonly keyLookup: boolean;
  /**
   * How a failed receipt must match the server's error: `code+message`, or `message` where the wire
   * carries no code (SEP-1391 reports a failure as a message, L-11).
   */
  readonly failedMatch: 'code+message' | 'message';
  /** Fault classes that cannot apply to this wire, with the reason (printed by the gate). */
  readonly notApplicable: Readonly<Partial<Record<FaultClass, string>>>;
  /**
   * Ledger states the series cannot reach over this wire, with the reason, beyond those no wire
   * reaches (`UNREACHABLE_STATES` of the gate, merged in there).
   */
  readonly unreachableStates: Readonly<Record<string, string>>;
  /**
   * The push stream the executor listens on over this wire (`network/push.ts`): the Tasks
   * extension's `subscriptions/listen`, or the 2025-11-25 session's GET stream. Absent: polling only.
   */
  readonly pushes?: 'modern' | 'legacy';
  /** Requests a network-level `duplicate` must not touch on this wire, with the reason. */
  readonly noDuplicate?: { readonly roles: readonly Role[]; readonly reason: string };
}
