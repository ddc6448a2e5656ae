import { describe, expect, it } from 'vitest';
import { webhookSection } from '../../src/console/webhooks.js';
import type { DeliveryRecord } from '../../src/store/outbox-port.js';

const T0 = 1_800_000_000_000;

describe('console: the task page webhook section (issue 32)', () => {
  it('shows each delivery and attempt, escapes the URL and never shows the secret', () => {
    const row: DeliveryRecord = {
      taskId: 't1',
      seq: 4,
      endpoint: 1,
      owner: 'alice',
      tool: 'report',
      url: 'https://hooks.example/<script>x</script>',
      secret: 'whsec_SECRETSECRETSECRETSECRETSECRET',
      status: 'completed',
      statusMessage: null,
      eventAt: T0,
      state: 'pending',
      attempts: 1,
      nextAt: T0 + 5_000,
      createdAt: T0,
      doneAt: null,
      attemptLog: [{ attempt: 1, at: T0 + 10, node: 'node-a', statusCode: 503, error: null, durationMs: 12 }],
    };
    const text = String(webhookSection([row]));
    expect(text).toContain('&lt;script&gt;');
    expect(text).not.toContain('<script>');
    expect(text).not.toContain('SECRET');
    expect(text).toContain('HTTP 503');
    expect(text).toContain('node-a');
    expect(text).toContain('data-state="pending"');
    expect(webhookSection([])).toBe('');
  });
});
