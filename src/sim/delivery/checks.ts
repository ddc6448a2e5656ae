/**
 * The checkers of webhook deliveries and event readers (issue 32), run after the series drained
 * its outbox and its readers:
 *
 * - `webhooks`: every task that reached a terminal state was delivered to the receiver at least
 *   once with that state, under its stable `webhook-id` (`msg_<task>_<seq>`), validly signed; no
 *   delivery named a terminal state its task did not end in.
 * - `events`: each reader saw the events of its operation's task as 1, 2, 3, ... over every
 *   resumption (none twice, none skipped) and, once the server said the sequence is complete, the
 *   last status it saw is the task's terminal state.
 */
import { isTerminal } from '../../core/task.js';
import type { Violation } from '../checks/invariants.js';
import type { ServerFacts } from '../server/facts.js';
import type { EventReaders } from './follow.js';
import type { SimReceiver } from './receiver.js';

export function checkWebhooks(facts: ServerFacts, receiver: SimReceiver): Violation[] {
  const v: Violation[] = [];
  for (const id of receiver.refused) v.push({ invariant: 'webhooks', detail: `${id}: signature or id refused` });
  const delivered = new Map<string, Set<string>>();
  for (const r of receiver.received.values()) {
    let statuses = delivered.get(r.taskId);
    if (statuses === undefined) delivered.set(r.taskId, (statuses = new Set()));
    statuses.add(r.status);
  }
  for (const id of facts.tasks.keys()) {
    const terminal = facts.terminal.get(id)?.status;
    const statuses = delivered.get(id) ?? new Set<string>();
    if (terminal !== undefined && !statuses.has(terminal)) {
      v.push({ invariant: 'webhooks', detail: `${id}: terminal ${terminal} never delivered` });
    }
    for (const status of statuses) {
      if (isTerminal(status as never) && status !== terminal) {
        v.push({
          invariant: 'webhooks',
          detail: `${id}: delivered ${status}, but it ended ${terminal ?? 'not terminal'}`,
        });
      }
    }
  }
  return v;
}

export function checkReaders(facts: ServerFacts, readers: EventReaders): Violation[] {
  const v: Violation[] = [];
  for (const [op, state] of readers.states) {
    const wrong = state.seqs.findIndex((seq, i) => seq !== i + 1);
    if (wrong >= 0) {
      const seq = state.seqs[wrong] as number;
      const what = seq <= wrong ? `event ${seq} seen again` : `events ${wrong + 1}-${seq - 1} skipped`;
      v.push({ invariant: 'events', detail: `${op}: ${what} (${state.resumed} resumptions)` });
      continue;
    }
    const task = facts.tasksByCallNode.get(op)?.at(-1);
    const terminal = task === undefined ? undefined : facts.terminal.get(task)?.status;
    if (!state.done) {
      // A reader still waiting for its operation's task id (one left UNKNOWN for an operator) has
      // nothing to read, and one whose task is still live on the server (left input_required by an
      // operation that ended otherwise, until its ttl) rightly follows it still; one that read
      // events of a task that ended and stopped short of `done` is stuck.
      if (state.ended === null && state.seqs.length > 0 && terminal !== undefined) {
        v.push({
          invariant: 'events',
          detail: `${op}: the reader stopped at ${state.seqs.at(-1)}, never done (the task ended ${terminal})`,
        });
      }
      continue;
    }
    if (terminal !== undefined && state.lastStatus !== terminal) {
      v.push({
        invariant: 'events',
        detail: `${op}: sequence done at ${state.lastStatus ?? 'no status'}, task ${terminal}`,
      });
    }
  }
  return v;
}
