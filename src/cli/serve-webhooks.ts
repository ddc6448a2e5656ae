import { InvalidArgumentError, type Command } from 'commander';
import { systemClock, systemRandom } from '../core/system.js';
import type { Logger } from '../core/ports.js';
import { WEBHOOK_EVENT_SETS, type WebhookEventSet } from '../core/webhook.js';
import type { WebhookSettings } from '../runner/webhooks.js';
import type { TaskStore } from '../store/port.js';
import type { Registry } from 'prom-client';
import { webhookMetrics } from '../telemetry/webhook-metrics.js';
import {
  DEFAULT_DELIVERY_LEASE_MS,
  DEFAULT_DELIVERY_RETENTION_MS,
  DEFAULT_DELIVERY_TIMEOUT_MS,
  startWebhookDelivery,
  type WebhookDelivery,
} from '../webhooks/delivery.js';
import { checkTarget, parseWebhookUrl } from '../webhooks/policy.js';
import { parseDuration, parseSchedule } from '../webhooks/schedule.js';
import { secretsKey } from '../webhooks/seal.js';
import { checkSecret } from '../webhooks/sign.js';

/** The `terminus serve` flags of webhooks (issue 32). */
export interface WebhookFlags {
  readonly webhook: string[];
  readonly webhookFor: string[];
  readonly webhookSecret?: string;
  readonly webhookEvents: WebhookEventSet;
  readonly webhookAllowHost: string[];
  readonly webhookRetry?: number[];
  readonly webhookLease: number;
  readonly webhookKey: string[];
  /** Null: delivered and dead rows are kept (`--webhook-retention 0`). */
  readonly webhookRetention: number | null;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function webhookOptions(command: Command): Command {
  return command
    .option('--webhook <url>', 'deliver every task’s terminal state to this URL (repeatable)', collect, [])
    .option(
      '--webhook-for <owner=url>',
      'deliver one caller’s tasks to this URL; owner as the console shows it, e.g. auth:alice (repeatable)',
      collect,
      [],
    )
    .option('--webhook-secret <whsec>', 'signing secret of --webhook and --webhook-for: "whsec_" + base64')
    .option(
      '--webhook-events <set>',
      `which status changes --webhook and --webhook-for get: ${WEBHOOK_EVENT_SETS.join(' or ')}`,
      (value: string) => {
        if (!WEBHOOK_EVENT_SETS.includes(value as WebhookEventSet)) throw new InvalidArgumentError('terminal or all');
        return value;
      },
      'terminal',
    )
    .option(
      '--webhook-allow-host <host>',
      'allow webhook targets on this host although it resolves to a private, loopback or link-local address (repeatable)',
      collect,
      [],
    )
    .option(
      '--webhook-key <key>',
      'seal stored webhook secrets with this server key, 32+ characters (repeatable: the first seals, each opens; comma-separated in the variable)',
      (value: string, previous: string[]) => [...previous, ...value.split(',').map((k) => k.trim())].filter(Boolean),
      [],
    )
    .option(
      '--webhook-lease <duration>',
      `how long a delivery claimed by a node that died (kill -9) waits before another node or the restarted one sends it again; above the ${DEFAULT_DELIVERY_TIMEOUT_MS / 1000} s attempt timeout`,
      (value: string) => {
        const ms = duration(value);
        if (ms <= DEFAULT_DELIVERY_TIMEOUT_MS) {
          throw new InvalidArgumentError(
            `must exceed the ${DEFAULT_DELIVERY_TIMEOUT_MS / 1000} s attempt timeout (a shorter lease sends a delivery again while it is on the wire)`,
          );
        }
        return ms;
      },
      DEFAULT_DELIVERY_LEASE_MS,
    )
    .option(
      '--webhook-retention <duration>',
      'delete delivered and dead deliveries (with their attempts) this long after they finished; 0 keeps them',
      (value: string) => {
        const ms = duration(value);
        return ms === 0 ? null : ms;
      },
      DEFAULT_DELIVERY_RETENTION_MS,
    )
    .option(
      '--webhook-retry <waits>',
      'waits between delivery attempts, e.g. 5s,5m,30m,2h,5h,10h,10h (the default)',
      (v) => {
        try {
          return parseSchedule(v);
        } catch (error) {
          throw new InvalidArgumentError((error as Error).message);
        }
      },
    );
}

function duration(value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/**
 * The engine's webhook settings from the flags, checked before anything starts: a URL that does
 * not parse, another scheme, a target the policy refuses, or a missing or malformed secret is one
 * line on stderr and exit 2.
 */
export async function webhookSettings(flags: WebhookFlags): Promise<WebhookSettings> {
  const sealing = flags.webhookKey.length === 0 ? {} : { keys: flags.webhookKey };
  const policy = { allowHosts: flags.webhookAllowHost };
  const operatorUrls = [...flags.webhook, ...flags.webhookFor.map((entry) => entry.slice(entry.indexOf('=') + 1))];
  try {
    for (const key of flags.webhookKey) secretsKey(key);
    if (operatorUrls.length === 0) return { policy, ...sealing };
    if (flags.webhookSecret === undefined) {
      throw new Error(
        '--webhook and --webhook-for need --webhook-secret (or TERMINUS_WEBHOOK_SECRET): "whsec_" + base64',
      );
    }
    checkSecret(flags.webhookSecret, '--webhook-secret');
    const endpoint = async (url: string) => {
      const parsed = parseWebhookUrl(url);
      await checkTarget(parsed, policy);
      return { url: parsed.toString(), secret: flags.webhookSecret as string, events: flags.webhookEvents };
    };
    const byOwner: Record<string, { url: string; secret: string; events: WebhookEventSet }[]> = {};
    for (const entry of flags.webhookFor) {
      const at = entry.indexOf('=');
      if (at <= 0) throw new Error(`--webhook-for ${entry}: expected OWNER=URL`);
      (byOwner[entry.slice(0, at)] ??= []).push(await endpoint(entry.slice(at + 1)));
    }
    return { policy, endpoints: await Promise.all(flags.webhook.map(endpoint)), byOwner, ...sealing };
  } catch (error) {
    process.stderr.write(`terminus serve: ${(error as Error).message.replace('a webhook key', '--webhook-key')}\n`);
    process.exit(2);
  }
}

/** Starts delivering the store's outbox (every node may: rows are claimed with leases). */
export function startDelivery(
  store: TaskStore,
  flags: WebhookFlags,
  node: string,
  logger: Logger,
  registry: Registry,
): WebhookDelivery | undefined {
  const outbox = store.webhooks;
  if (outbox === undefined) return undefined;
  const metrics = webhookMetrics({ registry, outbox, now: () => systemClock.now() });
  return startWebhookDelivery({
    outbox,
    node,
    clock: systemClock,
    random: systemRandom,
    logger,
    policy: { allowHosts: flags.webhookAllowHost },
    leaseMs: flags.webhookLease,
    keys: flags.webhookKey,
    retentionMs: flags.webhookRetention,
    ...(flags.webhookRetry === undefined ? {} : { retryScheduleMs: flags.webhookRetry }),
    onAttempt: (report) => metrics.attempt(report),
  });
}
