import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkTarget, parseWebhookUrl, type TargetPolicy } from './policy.js';

/** What one POST came to: the status the receiver answered, or why none came. */
export interface PostOutcome {
  readonly statusCode: number | null;
  readonly error: string | null;
}

/**
 * POSTs `body` to `url` with `headers`, connecting only to an address the policy allows: the
 * request's own DNS lookup is the checked one, so the name cannot resolve to something else
 * between the check and the connection (DNS rebinding). Never rejects: a refused target, a
 * network error or the timeout is an outcome with `statusCode` null. The answer's body is read
 * and dropped (at most 64 KiB are waited for).
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  policy: TargetPolicy,
  timeoutMs: number,
): Promise<PostOutcome> {
  let target: URL;
  try {
    target = parseWebhookUrl(url);
    await checkTarget(target, policy);
  } catch (error) {
    return { statusCode: null, error: (error as Error).message };
  }
  const lookup: LookupFunction = (_hostname, options, callback) => {
    checkTarget(target, policy).then(
      (addresses) => {
        if ((options as { all?: boolean }).all === true)
          (callback as (e: null, a: typeof addresses) => void)(null, addresses);
        else callback(null, addresses[0]?.address ?? '', addresses[0]?.family ?? 4);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 4),
    );
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostOutcome>((resolve) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        lookup,
        timeout: timeoutMs,
      },
      (res: IncomingMessage) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > 65_536) res.destroy();
        });
        res.on('close', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
        res.on('error', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => resolve({ statusCode: null, error: error.message }));
    req.end(body);
  });
}
