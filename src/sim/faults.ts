/**
 * The fault classes the simulation injects (docs/simulation.md, "Fault classes"; one class per item, plus the
 * plain network noise the issue names: loss, duplication, delay) and the per-series fault plan.
 *
 * A plan is data: message rules the in-process network applies to one operation's requests, and
 * timed process faults. `faultsFired` in a series outcome counts the rules that actually fired, which
 * is what coverage is measured on (a planned fault that never met its message does not count).
 */
import type { SimRandom } from './random.js';
import type { Trace } from './trace.js';

export const FAULT_CLASSES = [
  /** The create request reached the server, the task was committed, the response was lost. */
  'submit_response_lost',
  /** The create request never reached the server (proves "never created" by key lookup). */
  'submit_request_lost',
  /** Two pollers answered out of order: a `tasks/get` is answered with an older snapshot. */
  'poll_reorder',
  /** An `input_required` answer is replayed after its round was answered. */
  'input_replay',
  /** The client's cancel reaches the server at the instant the handler completes. */
  'cancel_complete_race',
  /** The server processed the cancel; the acknowledgement was lost. */
  'cancel_ack_lost',
  /** A terminal status was observed; the response carrying the result was lost. */
  'result_lost',
  /** A terminal status was observed; the response carrying the result was truncated. */
  'result_truncated',
  /** A server node stalls, another takes its tasks over, the stalled node's writes land late. */
  'stale_epoch',
  /** Requests name another operation's task or a foreign principal asks for ours (S8). */
  'task_id_misuse',
  /** A real task id answers "not found" before its expiry (misrouted / lost server state). */
  'not_found_before_expiry',
  /** The client is cut off after the terminal status until the task expired: 404 after expiry. */
  'not_found_after_expiry',
  'poll_429',
  'poll_503',
  'server_crash',
  'executor_crash',
  /** Any request delivered twice (creates included: S5). */
  'duplicate',
  /** Any request or response lost. */
  'drop',
  // Servers that misbehave (C13, `network/misbehave.ts`): lies told after the truth was answered once.
  /** A completed or failed task is reported `cancelled` from the next read on. */
  'terminal_rewritten',
  /** A completed task's result changes on every later read (its digest with it). */
  'result_changed',
  /** A terminal task is reported `working` again for one or two reads. */
  'terminal_reverted',
  /** A status read on the wire when the cancel won is answered late with a completion. */
  'late_completion_shown',
] as const;

/** What a listen stream can do to the notifications on it (drawn by `push-faults.ts`, fired by `network/push.ts`). */
export const PUSH_FAULT_CLASSES = [
  /** A notification is never delivered. */
  'push_lost',
  /** A notification is delivered twice. */
  'push_duplicated',
  /** A notification is delivered after the next one about the same task (an older snapshot last). */
  'push_reordered',
  /** A notification is delivered seconds late, after later changes (and their pushes). */
  'push_late',
  /** The stream is cut at a delivery: that push and the stream are gone; the client opens another. */
  'stream_cut',
] as const;
export type PushFaultClass = (typeof PUSH_FAULT_CLASSES)[number];

/**
 * What can happen to webhook deliveries and to a reader of a task's ordered events (drawn by
 * `delivery/plan.ts` from their own random stream, fired by `delivery/receiver.ts` and
 * `delivery/follow.ts`).
 */
export const DELIVERY_FAULT_CLASSES = [
  /** A POST never reaches the receiver: the sender's attempt times out and is retried. */
  'webhook_lost',
  /** The receiver gets a delivery twice: its 2xx answer was lost (the sender retries) or the POST was doubled. */
  'webhook_duplicated',
  /** A POST reaches the receiver seconds late, after later deliveries (and past the attempt timeout). */
  'webhook_delayed',
  /** The receiver is down (connection refused) for 20 s to 3 min of virtual time. */
  'receiver_down',
  /** An event reader's stream breaks after an event; the reader resumes from the cursor it holds. */
  'event_stream_cut',
] as const;
export type DeliveryFaultClass = (typeof DELIVERY_FAULT_CLASSES)[number];

/**
 * `FAULT_CLASSES` (drawn by `plan.ts`), the push faults of listen streams (`PUSH_FAULT_CLASSES`)
 * and the webhook and event-reader faults (`DELIVERY_FAULT_CLASSES`).
 */
export type FaultClass = (typeof FAULT_CLASSES)[number] | PushFaultClass | DeliveryFaultClass;

/** Every class, in the order `--faults` lists them. */
export const ALL_FAULT_CLASSES: readonly FaultClass[] = [
  ...FAULT_CLASSES,
  ...PUSH_FAULT_CLASSES,
  ...DELIVERY_FAULT_CLASSES,
];

export function isFaultClass(value: string): value is FaultClass {
  return [FAULT_CLASSES, PUSH_FAULT_CLASSES, DELIVERY_FAULT_CLASSES].some((list) =>
    (list as readonly string[]).includes(value),
  );
}

/** A message rule: applies to requests of one operation (`op`), or any when null. */
export interface MessageRule {
  readonly fault: FaultClass;
  readonly op: string | null;
  /** Times it may still fire. */
  remaining: number;
  /** Probability per matching message (1 = the first matching message). */
  readonly p: number;
  /** Rule-specific number: Retry-After ms for throttles, partition length for expiry. */
  readonly arg: number;
}

/** What a firing rule draws from and reports to: the network's, or the push stream's own. */
export interface RuleSink {
  readonly rules: readonly MessageRule[];
  readonly random: SimRandom;
  readonly fired: Map<FaultClass, number>;
  readonly trace: Trace;
}

/** The first live rule of `fault` for `op` that fires now (drawing its probability), counted and traced. */
export function fireRule(sink: RuleSink, fault: FaultClass, op: string | null): MessageRule | null {
  for (const rule of sink.rules) {
    if (rule.fault !== fault || rule.remaining <= 0 || (rule.op !== null && rule.op !== op)) continue;
    if (rule.p < 1 && !sink.random.chance(rule.p)) continue;
    rule.remaining--;
    sink.fired.set(fault, (sink.fired.get(fault) ?? 0) + 1);
    sink.trace.add('fault', `${fault} on ${op ?? '-'}`);
    return rule;
  }
  return null;
}

export interface ProcessFault {
  readonly fault: 'server_crash' | 'executor_crash' | 'stale_epoch';
  /** Virtual ms from the series start. */
  readonly at: number;
  /** Down time (crash) or stall length (stale epoch), ms. */
  readonly duration: number;
}

export interface FaultPlan {
  /** `swarm` (drawn) or the name of a scripted timeline. */
  readonly name: string;
  readonly rules: MessageRule[];
  readonly process: ProcessFault[];
}

export function describePlan(plan: FaultPlan): string[] {
  const lines = [`plan ${plan.name}`];
  for (const p of plan.process) lines.push(`  t=${p.at}ms ${p.fault} for ${p.duration}ms`);
  for (const r of plan.rules) {
    lines.push(`  ${r.fault} on ${r.op ?? 'any op'} x${r.remaining} p=${r.p}${r.arg === 0 ? '' : ` arg=${r.arg}`}`);
  }
  return lines;
}
