import { leaseLost } from '../../core/errors.js';
import type { WebhookEndpoint } from '../../core/webhook.js';
import { isTerminal, type TaskRecord } from '../../core/task.js';
import type { DeliveryRecord, WebhookOutbox } from '../outbox-port.js';
import { copy, type MemoryState } from './state.js';

const key = (taskId: string, seq: number, endpoint: number): string => `${taskId}\u0000${seq}\u0000${endpoint}`;

/** The outbox rows of one status event of `task` (called inside the write, as the SQL backends do). */
export function enqueueWebhooks(
  state: MemoryState,
  task: TaskRecord,
  endpoints: readonly WebhookEndpoint[] | undefined,
  seq: number,
  status: TaskRecord['status'],
  statusMessage: string | null,
  now: number,
): void {
  (endpoints ?? []).forEach((endpoint, i) => {
    if (endpoint.events !== 'all' && !isTerminal(status)) return;
    state.outbox.set(key(task.id, seq, i + 1), {
      delivery: {
        taskId: task.id,
        seq,
        endpoint: i + 1,
        owner: task.owner,
        tool: task.tool,
        url: endpoint.url,
        secret: endpoint.secret,
        status,
        statusMessage,
        eventAt: now,
        state: 'pending',
        attempts: 0,
        nextAt: now,
        createdAt: now,
        doneAt: null,
      },
      leaseOwner: null,
      leaseExpiresAt: null,
      attemptLog: [],
    });
  });
}

export function memoryOutbox(state: MemoryState, run: <T>(op: () => T) => Promise<T>): WebhookOutbox {
  const rows = () => [...state.outbox.values()];
  return {
    claimDeliveries: (claim) =>
      run(() =>
        rows()
          .filter((r) => r.delivery.state === 'pending' && (r.delivery.nextAt ?? 0) <= claim.now)
          .filter((r) => r.leaseExpiresAt === null || r.leaseExpiresAt <= claim.now)
          .sort((a, b) => (a.delivery.nextAt ?? 0) - (b.delivery.nextAt ?? 0))
          .slice(0, claim.limit)
          .map((r) => {
            r.leaseOwner = claim.node;
            r.leaseExpiresAt = claim.now + claim.leaseMs;
            return copy(r.delivery);
          }),
      ),
    recordAttempt: (claimed, node, attempt, next) =>
      run(() => {
        const row = state.outbox.get(key(claimed.taskId, claimed.seq, claimed.endpoint));
        if (row === undefined || row.leaseOwner !== node || row.delivery.attempts !== claimed.attempts) {
          throw leaseLost(claimed.taskId, claimed.attempts);
        }
        row.delivery = {
          ...row.delivery,
          state: next.state,
          attempts: row.delivery.attempts + 1,
          nextAt: next.state === 'pending' ? next.nextAt : null,
          doneAt: next.state === 'pending' ? null : attempt.at,
        };
        row.leaseOwner = null;
        row.leaseExpiresAt = null;
        row.attemptLog.push(copy(attempt));
      }),
    readDeliveries: (owner, taskId) =>
      run(() =>
        rows()
          .filter((r) => r.delivery.taskId === taskId && (owner === null || r.delivery.owner === owner))
          .sort((a, b) => a.delivery.seq - b.delivery.seq || a.delivery.endpoint - b.delivery.endpoint)
          .map((r): DeliveryRecord => copy({ ...r.delivery, attemptLog: r.attemptLog })),
      ),
    deliveryStats: () =>
      run(() => {
        const pending = rows().filter((r) => r.delivery.state === 'pending');
        const oldest = pending.reduce<number | null>((min, r) => Math.min(min ?? Infinity, r.delivery.createdAt), null);
        return { pending: pending.length, oldestPendingAt: oldest };
      }),
    sweepDeliveries: (before, limit) =>
      run(() => {
        let swept = 0;
        for (const [k, r] of state.outbox) {
          if (swept >= limit) break;
          if (r.delivery.state === 'pending' || (r.delivery.doneAt ?? Infinity) > before) continue;
          state.outbox.delete(k);
          swept++;
        }
        return swept;
      }),
  };
}
