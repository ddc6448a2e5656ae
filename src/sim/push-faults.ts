/**
 * Push faults (issue 17 item 2): what a listen stream can do to the notifications on it. They are
 * drawn from their own random stream (`push`), so adding them shifts no draw of the other classes'
 * plans; the rules are ordinary `MessageRule`s in the series plan (printed with it, and an
 * operation they name is not "clean" for the poll-count figure), fired by `network/push.ts`.
 */
import { PUSH_FAULT_CLASSES, type MessageRule, type PushFaultClass } from './faults.js';
import type { SimRandom } from './random.js';
import type { OperationPlan } from './workload.js';

const rule = (fault: PushFaultClass, op: string | null, remaining: number, p: number, arg = 0): MessageRule => ({
  fault,
  op,
  remaining,
  p,
  arg,
});

/** Swarm: each push class on with probability 0.35 (restricted to `allowed`), like the others. */
export function pushPlan(ops: readonly OperationPlan[], r: SimRandom, allowed: readonly string[]): MessageRule[] {
  const rules: MessageRule[] = [];
  const op = (): string => r.pick([...ops]).callNodeId;
  for (const fault of PUSH_FAULT_CLASSES) {
    if (!allowed.includes(fault) || !r.chance(0.35)) continue;
    switch (fault) {
      case 'push_lost':
        rules.push(rule(fault, r.chance(0.5) ? op() : null, r.int(1, 4), 0.5));
        break;
      case 'push_duplicated':
        rules.push(rule(fault, null, r.int(1, 4), 0.3));
        break;
      case 'push_reordered':
        rules.push(rule(fault, op(), r.int(1, 2), 0.5));
        break;
      case 'push_late':
        rules.push(rule(fault, op(), r.int(1, 2), 0.5, r.int(500, 8_000)));
        break;
      case 'stream_cut':
        rules.push(rule(fault, null, r.int(1, 2), 0.3));
        break;
    }
  }
  return rules;
}
