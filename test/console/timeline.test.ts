/**
 * The console's timeline puts every entry in time order, an input's answer before the outcome it
 * led to. Seen in a browser: a `migrate` task's page listed "input … answered" last, after
 * "completed" and "run ended", without a time (the node's own `input_answered` event was dropped
 * and the record's untimed answer sorted after the outcome); a cancelled task's "cancelled" came
 * before "cancel requested: won" (the event took a later clock reading than the store's).
 */
import { describe, expect, it } from 'vitest';
import { timelineOf } from '../../src/console/timeline.js';
import type { TaskRecord } from '../../src/core/task.js';
import type { LifecycleEvent } from '../../src/runner/observer.js';
import { taskRecord } from '../fixtures/task-record.js';

const T0 = 1_800_000_000_000;
const KEY = 'input-0-f8a2b263c1e7';

const task: TaskRecord = taskRecord(T0, {
  id: 't1',
  tool: 'migrate',
  status: 'completed',
  progress: { done: 50, total: 50 },
  updatedAt: T0 + 400,
  terminalAt: T0 + 300,
  inputResponses: { [KEY]: { action: 'accept' } },
  result: { content: [] },
  resultDigest: 'r',
});

const seen: LifecycleEvent[] = [
  {
    kind: 'claimed',
    at: T0 + 10,
    taskId: 't1',
    tool: 'migrate',
    node: 'n1',
    epoch: 1,
    createdAt: T0,
    previousNode: null,
  },
  { kind: 'input_requested', at: T0 + 100, taskId: 't1', tool: 'migrate', node: 'n1', epoch: 1, key: KEY },
  { kind: 'input_answered', at: T0 + 200, taskId: 't1', tool: 'migrate', keys: [KEY], status: 'working' },
  {
    kind: 'run_ended',
    at: T0 + 310,
    taskId: 't1',
    tool: 'migrate',
    node: 'n1',
    epoch: 1,
    runMs: 300,
    outcome: 'completed',
  },
];

describe('console timeline', () => {
  it('the answer this node saw has its time, once, between the request and the outcome', () => {
    const lines = timelineOf(task, seen);
    expect(lines.map((l) => l.text)).toEqual([
      'created on wire mcp-tasks-ext for tool migrate (owner anonymous)',
      'epoch 1: claimed on node n1',
      `epoch 1: input ${KEY} requested`,
      `input ${KEY} answered`,
      'completed at epoch 1',
      'epoch 1 on node n1: run ended (completed) after 300 ms',
      'progress 50 of 50',
    ]);
    expect(lines.find((l) => l.text === `input ${KEY} answered`)?.at).toBe(T0 + 200);
  });

  it("a won cancel comes before the cancelled it caused (both at the store's instant)", () => {
    const cancelled: TaskRecord = { ...task, status: 'cancelled', inputResponses: {}, terminalAt: T0 + 250 };
    const cancel: LifecycleEvent = {
      kind: 'cancel_requested',
      at: T0 + 250,
      taskId: 't1',
      tool: 'migrate',
      outcome: 'won',
      status: 'cancelled',
    };
    const lines = timelineOf(cancelled, [seen[0]!, cancel]).map((l) => l.text);
    expect(lines.slice(-3)).toEqual(['cancel requested: won', 'cancelled', 'progress 50 of 50']);
  });

  it('an answer given before this node started (no time in the record) still comes before the outcome', () => {
    const lines = timelineOf(task, []).map((l) => l.text);
    expect(lines.indexOf(`input ${KEY} answered`)).toBeGreaterThan(lines.indexOf('epoch 1: claimed'));
    expect(lines.indexOf(`input ${KEY} answered`)).toBeLessThan(lines.indexOf('completed at epoch 1'));
  });
});
