/**
 * Broken delivery loops and event readers (issue 32), for the tests that prove the gate catches
 * them: test-only hooks handed to `runSeries` (a wrapped outbox under the real delivery loop, a
 * reader that forgets its cursor); the real code paths are never edited.
 */
import { isTerminal } from '../../core/task.js';
import type { WebhookOutbox } from '../../store/outbox-port.js';
import type { BrokenVariant } from '../variants.js';

/**
 * Drops rows: a claimed terminal-state row of an even seq is recorded delivered (200, no error)
 * without being posted, as a loop that loses a row between the claim and the POST would leave it.
 */
const droppingOutbox = (outbox: WebhookOutbox): WebhookOutbox => ({
  ...outbox,
  claimDeliveries: async (claim) => {
    const rows = await outbox.claimDeliveries(claim);
    const kept = [];
    for (const row of rows) {
      if (!isTerminal(row.status as never) || row.seq % 2 !== 0) {
        kept.push(row);
        continue;
      }
      const attempt = {
        attempt: row.attempts + 1,
        at: claim.now,
        node: claim.node,
        statusCode: 200,
        error: null,
        durationMs: 0,
      };
      await outbox.recordAttempt(row, claim.node, attempt, { state: 'delivered', nextAt: null });
    }
    return kept;
  },
});

export const DELIVERY_BROKEN_VARIANTS: readonly BrokenVariant[] = [
  {
    name: 'a delivery loop that drops a row',
    breaks: 'webhooks',
    faults: ['webhook_lost'],
    hooks: { outbox: droppingOutbox },
  },
  {
    name: 'an event reader that reads from the first event again after a cut',
    breaks: 'events',
    faults: ['event_stream_cut'],
    hooks: { resumeFrom: () => undefined },
  },
];
