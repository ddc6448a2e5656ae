import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { TerminusError } from '../core/errors.js';

/**
 * Which webhook targets the server may call. A webhook URL comes from a caller, so without a rule
 * it is a way to make the server reach what only the server can reach: private networks, loopback,
 * link-local (cloud metadata at 169.254.169.254). Every address a target's name resolves to is
 * checked, at submit and again at each delivery, and the connection goes to the address checked
 * (the lookup the request uses is this one), so a name that changes its answer between the two
 * (DNS rebinding) reaches nothing refused.
 */
export interface TargetPolicy {
  /** Host names (or literal addresses) the operator allows whatever they resolve to (`--webhook-allow-host`). */
  readonly allowHosts?: readonly string[];
}

const REFUSED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  REFUSED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  REFUSED.addSubnet(net, prefix, 'ipv6');
}

/** Whether `address` is private, loopback, link-local, unspecified, multicast or reserved. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return REFUSED.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return REFUSED.check(mapped[1] as string, 'ipv4');
  return REFUSED.check(address, 'ipv6');
}

function refused(url: string, why: string): TerminusError {
  return new TerminusError('invalid_argument', `webhook ${url} is refused: ${why}`, {
    details: { field: 'webhook', reason: 'webhook_target_refused' },
  });
}

/**
 * The longest webhook URL accepted (2,048 characters, what browsers and most proxies take): a URL is
 * stored with its task and in every outbox row, so its size is bounded like the arguments'.
 */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Parses a webhook URL: http(s) only, no credentials in it. `invalid_argument` naming what is wrong. */
export function parseWebhookUrl(text: string): URL {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) {
    throw new TerminusError(
      'invalid_argument',
      `webhook URL is too long: ${text.length} characters, at most ${MAX_WEBHOOK_URL_LENGTH}`,
      { details: { field: 'webhook' } },
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TerminusError('invalid_argument', `webhook URL ${JSON.stringify(text.slice(0, 200))} does not parse`, {
      details: { field: 'webhook' },
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TerminusError('invalid_argument', `webhook URL must be http:// or https://, got ${url.protocol}`, {
      details: { field: 'webhook' },
    });
  }
  if (url.username !== '' || url.password !== '') {
    throw new TerminusError(
      'invalid_argument',
      'webhook URL must not carry credentials (the signature authenticates)',
      {
        details: { field: 'webhook' },
      },
    );
  }
  return url;
}

/** The host as `allowHosts` names it: lower case, IPv6 without brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * Resolves `url`'s host and returns the addresses the policy lets the server connect to; rejects
 * `invalid_argument` (`webhook_target_refused`) when any address is refused (a name that also
 * resolves to a private address is refused whole) or the name does not resolve.
 */
export async function checkTarget(url: URL, policy: TargetPolicy): Promise<{ address: string; family: number }[]> {
  const host = hostOf(url);
  const allowed = (policy.allowHosts ?? []).some((h) => h.toLowerCase() === host);
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (error) {
      throw refused(url.toString(), `its host does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  if (!allowed) {
    const bad = addresses.find((a) => isRefusedAddress(a.address));
    if (bad !== undefined) {
      throw refused(
        url.toString(),
        `${host} resolves to ${bad.address}, a private, loopback or link-local address (an operator may allow it with --webhook-allow-host ${host})`,
      );
    }
  }
  return addresses;
}
