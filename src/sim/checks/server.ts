/** The server invariants S1-S8 as the wire log and the server's facts show them (S9 is per operation). */
import { isTerminal, type TaskRecord } from '../../core/task.js';
import type { CheckInput } from './input.js';
import type { Invariant } from './invariants.js';

export function serverChecks(
  input: CheckInput,
  finals: Map<string, TaskRecord | null>,
  add: (i: Invariant, d: string) => void,
): void {
  const { facts, log } = input;
  // S1: a task id reaches the client only once the task was committed.
  for (const e of log.events) {
    if (e.kind === 'answer' && e.method === 'tools/call' && e.taskId !== undefined && !facts.tasks.has(e.taskId)) {
      add('S1', `create answered with ${e.taskId} before any commit`);
    }
  }
  // S2: terminal statuses never change.
  for (const [id, history] of facts.statusHistory) {
    const first = history.findIndex((s) => isTerminal(s));
    if (first >= 0 && history.length > first + 1) add('S2', `${id}: ${history.slice(first).join(' -> ')}`);
  }
  // S3: no write from a stale epoch took effect.
  for (const w of facts.staleWrites)
    add('S3', `${w.taskId}: ${w.method} from epoch ${w.epoch} accepted at epoch ${w.currentEpoch}`);
  // S4: a won cancel stays cancelled, and a late completion is never the result.
  for (const [id] of facts.cancelWon) {
    const final = finals.get(id);
    if (final !== null && final !== undefined && (final.status !== 'cancelled' || final.result !== null)) {
      add('S4', `${id}: cancel won but the task ended ${final.status}`);
    }
  }
  // S5: one task per (owner, submission key).
  const keys = new Map<string, number>();
  for (const meta of facts.tasks.values()) {
    if (meta.key === null) continue;
    const k = `${meta.owner} ${meta.key}`;
    keys.set(k, (keys.get(k) ?? 0) + 1);
  }
  for (const [k, n] of keys) if (n > 1) add('S5', `${n} tasks for key ${k}`);
  // S6: a burned key never creates.
  for (const c of facts.createdAfterBurn) add('S6', `key ${c.key} created a task after it was burned`);
  // S7: only terminal tasks disappear (TTL never deletes or fails a working one).
  for (const [id, final] of finals) {
    if (final === null) add('S7', `${id}: gone without ever being terminal`);
    else if (final.status === 'failed' && final.error?.code !== -32000)
      add('S7', `${id}: failed by the server (${final.error?.message})`);
  }
  // S8: a foreign principal learns nothing an unknown id would not tell.
  for (const id of log.s8Leaks) add('S8', `${id}: foreign principal got a different answer than an unknown id`);
}
