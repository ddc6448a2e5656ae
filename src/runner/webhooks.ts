import { TerminusError } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import { WEBHOOK_EVENT_SETS, type WebhookEndpoint, type WebhookEventSet } from '../core/webhook.js';
import { checkTarget, parseWebhookUrl, type TargetPolicy } from '../webhooks/policy.js';
import { sealSecret, secretsKey } from '../webhooks/seal.js';
import { checkSecret } from '../webhooks/sign.js';

/**
 * Where a node's tasks deliver their status events (issue 32), besides what each call names: the
 * operator's endpoints for every task (`--webhook`) and for one caller's (`--webhook-for`), and
 * the target policy every URL is checked against.
 */
export interface WebhookSettings {
  /** For every task. */
  readonly endpoints?: readonly Omit<WebhookEndpoint, 'source'>[];
  /** For the tasks of one owner (the owner as the wires derive it: `auth:<client id>`, ...). */
  readonly byOwner?: Readonly<Record<string, readonly Omit<WebhookEndpoint, 'source'>[]>>;
  /** Which targets are allowed; private, loopback and link-local addresses are refused by default. */
  readonly policy?: TargetPolicy;
  /**
   * Server keys (`--webhook-key`, at least 32 characters each): the first seals every endpoint's
   * secret before the task is stored (`webhooks/seal.ts`); the delivery loop MUST be given the same
   * keys to open them. None: secrets are stored as given, readable by whoever reads the database.
   */
  readonly keys?: readonly string[];
}

/** What a call asks for: `_meta["mcp-terminus.dev/webhook"]` on the Tasks extension. */
export interface CallWebhook {
  readonly url: string;
  readonly secret: string;
  readonly events?: WebhookEventSet;
}

/** Decodes a call's webhook object; `invalid_argument` naming the field for anything else. */
export function decodeCallWebhook(value: unknown): CallWebhook {
  if (!isRecord(value)) throw invalid('webhook must be an object { url, secret, events? }');
  const { url, secret, events } = value;
  if (typeof url !== 'string') throw invalid('webhook.url must be a string');
  if (typeof secret !== 'string') throw invalid('webhook.secret must be a string ("whsec_" + base64)');
  if (events !== undefined && !WEBHOOK_EVENT_SETS.includes(events as WebhookEventSet)) {
    throw invalid(`webhook.events must be "terminal" or "all", got ${shown(events)}`);
  }
  return { url, secret, ...(events === undefined ? {} : { events: events as WebhookEventSet }) };
}

/**
 * The endpoints a new task is stored with: the call's own (checked here: a URL that does not
 * parse, another scheme, a bad secret or a target the policy refuses is `invalid_argument`, before
 * anything is written), then the caller's and everyone's from the operator.
 */
export async function resolveWebhooks(
  settings: WebhookSettings | undefined,
  owner: string,
  call: CallWebhook | undefined,
): Promise<WebhookEndpoint[]> {
  const endpoints: WebhookEndpoint[] = [];
  if (call !== undefined) {
    const url = parseWebhookUrl(call.url);
    checkSecret(call.secret, 'webhook.secret');
    await checkTarget(url, settings?.policy ?? {});
    endpoints.push({ url: url.toString(), secret: call.secret, events: call.events ?? 'terminal', source: 'call' });
  }
  for (const e of settings?.byOwner?.[owner] ?? []) endpoints.push({ ...e, source: 'principal' });
  for (const e of settings?.endpoints ?? []) endpoints.push({ ...e, source: 'server' });
  const sealing = settings?.keys?.[0];
  if (sealing === undefined) return endpoints;
  const key = secretsKey(sealing);
  return endpoints.map((e) => ({ ...e, secret: sealSecret(e.secret, key) }));
}

/** A value as a refusal quotes it: JSON, cut to 40 characters (a caller may send a megabyte). */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function invalid(message: string): TerminusError {
  return new TerminusError('invalid_argument', message, { details: { field: 'webhook' } });
}
