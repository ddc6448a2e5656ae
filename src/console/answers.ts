/** The console's HTTP answers: its HTML pages, and the refusal of a form posted from another site. */

/** An HTML page: never cached, nothing loaded from elsewhere, no script at all. */
export function htmlResponse(body: string, status = 200): Response {
  return new Response(body, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    },
  });
}

/** Browsers send `Origin` on every form POST; one naming another host is a cross-site request (403). */
export function checkOrigin(request: Request): Response | undefined {
  const origin = request.headers.get('origin');
  const host = request.headers.get('host');
  if (origin === null || host === null) return undefined;
  try {
    if (new URL(origin).host === host) return undefined;
  } catch {
    // An unparsable Origin is refused like a foreign one.
  }
  return new Response('cross-site request refused', { status: 403, headers: { 'content-type': 'text/plain' } });
}
