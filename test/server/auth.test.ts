import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { Registry } from 'prom-client';
import { operationsRoutes } from '../../src/server/http/ops-routes.js';
import { readinessProbe } from '../../src/telemetry/health.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { createBearerAuth, createJwtAuth, firstOf, readJwks, readTokensFile } from '../../src/server/auth/index.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { serveAuth } from '../../src/cli/serve-auth.js';
import { rpc } from './helpers.js';
import { aip, Gates, testTools, type Json } from '../wires/helpers.js';

/**
 * Issue 12 item 2: bearer tokens from a file and JWTs (jose) bind the owner on every wire; a request
 * without a valid credential is 401 with a `WWW-Authenticate` challenge on /mcp and /v1 alike.
 */
const ISSUER = 'https://login.test/';
const AUDIENCE = 'mcp-terminus-test';
const ALICE_TOKEN = 'alice-0123456789abcdef';
let dir: string;
let keys: { privateKey: CryptoKey; jwk: JWK };
let otherKey: CryptoKey;
let jwksServer: Server;
let jwksUrl: string;

async function signed(
  claims: Record<string, unknown>,
  options: { key?: CryptoKey; iss?: string; aud?: string; exp?: string } = {},
) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? '5m')
    .sign(options.key ?? keys.privateKey);
}

async function serve(authenticate: Awaited<ReturnType<typeof serveAuth>>) {
  const store = createMemoryTaskStore();
  const engine = createEngine({
    store,
    tools: testTools(new Gates()),
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
  });
  engine.start();
  const registry = createWireRegistry();
  const server = createTerminusServer({ engine, wires: registry.adapters });
  const http = await server.serveHttp({
    port: 0,
    ...(authenticate === undefined ? {} : { authenticate }),
    routes: operationsRoutes({
      readiness: readinessProbe({ store, now: () => Date.now() }),
      registry: new Registry(),
    }),
  });
  return {
    url: http.url,
    base: http.url.replace(/\/mcp$/, ''),
    engine,
    close: async () => {
      await http.close();
      await engine.stop();
      await store.close();
    },
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-auth-'));
  const pair = await generateKeyPair('ES256', { extractable: true });
  keys = { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' } };
  otherKey = (await generateKeyPair('ES256')).privateKey;
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ [ALICE_TOKEN]: 'alice' }));
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [keys.jwk] }));
  jwksServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [keys.jwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => jwksServer.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('bearer tokens from a file', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve(createBearerAuth({ tokens: await readTokensFile(join(dir, 'tokens.json')) }));
  });
  afterAll(async () => s.close());

  it('401 with a challenge without a token, on /mcp and /v1; nothing reaches a handler', async () => {
    const mcp = await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toBe('Bearer realm="mcp-terminus"');
    expect(((await mcp.json()) as Json).error.data.reason).toBe('unauthenticated');
    const v1 = await fetch(`${s.base}/v1/operations`);
    expect(v1.status).toBe(401);
    expect(v1.headers.get('www-authenticate')).toBe('Bearer realm="mcp-terminus"');
    expect(((await v1.json()) as Json).error.status).toBe('UNAUTHENTICATED');
    const run = await aip(s.base, 'POST', '/v1/tools/work:run', undefined, { arguments: {} });
    expect(run.status).toBe(401);
    expect((await s.engine.list('anonymous', { limit: 10 })).tasks).toHaveLength(0);
  });

  it('the health probes answer without a token; /metrics needs one like every other route', async () => {
    expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
    // Ready or not (no claim pass is observed here), the probe answers: it is not refused.
    const ready = await fetch(`${s.base}/readyz`);
    expect([200, 503]).toContain(ready.status);
    expect(((await ready.json()) as Json).ready).toBeTypeOf('boolean');
    expect((await fetch(`${s.base}/metrics`)).status).toBe(401);
    const authorized = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${ALICE_TOKEN}` } });
    expect(authorized.status).toBe(200);
  });

  it('401 invalid_token for an unknown token or another scheme', async () => {
    for (const authorization of ['Bearer alice-0123456789abcdeX', 'Basic YWxpY2U6eA==']) {
      const answer = await fetch(`${s.base}/v1/operations`, { headers: { authorization } });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('a known token is its client id on every wire: owner token:alice', async () => {
    const created = await aip(s.base, 'POST', '/v1/tools/work:run', ALICE_TOKEN, { arguments: {}, requestId: 'job-1' });
    expect(created.status).toBe(200);
    const listed = await aip(s.base, 'GET', '/v1/operations', ALICE_TOKEN);
    expect(listed.body.operations.map((o: { name: string }) => o.name)).toContain(created.body.name);
    const mcp = await rpc(s.url, 'tools/call', { name: 'work', arguments: {} }, { token: ALICE_TOKEN });
    expect(mcp.result.resultType).toBe('task');
    await expect(s.engine.get('token:alice', mcp.result.taskId as string)).resolves.toMatchObject({
      owner: 'token:alice',
    });
  });

  it('a tokens file with a short token is refused naming the file', async () => {
    writeFileSync(join(dir, 'weak.json'), JSON.stringify({ abc: 'alice' }));
    await expect(readTokensFile(join(dir, 'weak.json'))).rejects.toThrow(/weak\.json.*at least 16/);
  });
});

describe.each([
  ['a JWKS file', () => join(dir, 'jwks.json')],
  ['a JWKS URL on loopback', () => jwksUrl],
])('JWT verified with %s', (_label, source) => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve(createJwtAuth({ issuer: ISSUER, audience: AUDIENCE, jwks: await readJwks(source()) }));
  });
  afterAll(async () => s.close());

  const status = async (token: string) => {
    const answer = await fetch(`${s.base}/v1/operations`, { headers: { authorization: `Bearer ${token}` } });
    return { status: answer.status, challenge: answer.headers.get('www-authenticate') };
  };

  it('the subject is the client id; two subjects never see each other', async () => {
    const bob = await signed({ sub: 'bob', scope: 'tasks' });
    const carol = await signed({ sub: 'carol' });
    const created = await aip(s.base, 'POST', '/v1/tools/work:run', bob, { arguments: {} });
    expect(created.status).toBe(200);
    expect((await aip(s.base, 'GET', `/v1/${created.body.name as string}`, bob)).status).toBe(200);
    expect((await aip(s.base, 'GET', `/v1/${created.body.name as string}`, carol)).status).toBe(404);
    const id = (created.body.name as string).replace('operations/', '');
    expect((await s.engine.get(`jwt:${ISSUER}#bob`, id)).owner).toBe('jwt:https://login.test/#bob');
  });

  it.each([
    ['another issuer', () => signed({ sub: 'bob' }, { iss: 'https://evil.test/' }), 'iss claim rejected'],
    ['another audience', () => signed({ sub: 'bob' }, { aud: 'other' }), 'aud claim rejected'],
    ['an expired token', () => signed({ sub: 'bob' }, { exp: '-10m' }), 'token expired'],
    ['another key', () => signed({ sub: 'bob' }, { key: otherKey }), 'signature not verified'],
    ['no subject', () => signed({}), 'the token has no sub claim'],
    ['garbage', () => Promise.resolve('not.a.jwt'), 'malformed token'],
  ])('401 invalid_token for %s', async (_what, make, description) => {
    const answer = await status(await make());
    expect(answer.status).toBe(401);
    expect(answer.challenge).toBe(
      `Bearer realm="mcp-terminus", error="invalid_token", error_description="${description}"`,
    );
  });
});

describe('terminus serve flags', () => {
  it('tokens and JWT together: either credential works', async () => {
    const hook = await serveAuth(
      {
        authTokens: join(dir, 'tokens.json'),
        authJwks: join(dir, 'jwks.json'),
        authIssuer: ISSUER,
        authAudience: AUDIENCE,
      },
      { host: '127.0.0.1', stdio: false, logger: silent([]) },
    );
    const s = await serve(hook);
    try {
      expect((await aip(s.base, 'GET', '/v1/operations', ALICE_TOKEN)).status).toBe(200);
      expect((await aip(s.base, 'GET', '/v1/operations', await signed({ sub: 'bob' }))).status).toBe(200);
      expect((await aip(s.base, 'GET', '/v1/operations', 'nobody-0123456789abc')).status).toBe(401);
    } finally {
      await s.close();
    }
  });

  it('S8 a JWT subject and a static token with the same client id are two owners: neither reaches the other', async () => {
    const hook = await serveAuth(
      {
        authTokens: join(dir, 'tokens.json'), // ALICE_TOKEN is client id "alice"
        authJwks: join(dir, 'jwks.json'),
        authIssuer: ISSUER,
        authAudience: AUDIENCE,
      },
      { host: '127.0.0.1', stdio: false, logger: silent([]) },
    );
    const s = await serve(hook);
    try {
      const jwtAlice = await signed({ sub: 'alice' });
      const byToken = await aip(s.base, 'POST', '/v1/tools/work:run', ALICE_TOKEN, { arguments: {}, requestId: 'r-1' });
      const byJwt = await aip(s.base, 'POST', '/v1/tools/work:run', jwtAlice, { arguments: {}, requestId: 'r-1' });
      // The same requestId makes two operations: keys are per owner, and these are two owners.
      expect(byJwt.body.name).not.toBe(byToken.body.name);
      for (const [reader, foreign] of [
        [jwtAlice, byToken.body.name],
        [ALICE_TOKEN, byJwt.body.name],
      ] as const) {
        expect((await aip(s.base, 'GET', `/v1/${foreign as string}`, reader)).status).toBe(404);
        const listed = await aip(s.base, 'GET', '/v1/operations', reader);
        expect(listed.body.operations.map((o: { name: string }) => o.name)).not.toContain(foreign);
        expect((await aip(s.base, 'POST', `/v1/${foreign as string}:cancel`, reader)).status).toBe(404);
      }
      // A 2025 session opened with the token is not the JWT subject's either.
      const opened = await fetch(s.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${ALICE_TOKEN}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        }),
      });
      await opened.arrayBuffer();
      const session = opened.headers.get('mcp-session-id') ?? '';
      expect(session).not.toBe('');
      const onSession = (token: string) =>
        fetch(s.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': session,
            'mcp-protocol-version': '2025-11-25',
            authorization: `Bearer ${token}`,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
        });
      expect((await onSession(jwtAlice)).status).toBe(404);
      expect((await onSession(ALICE_TOKEN)).status).toBe(200);
      const id = (name: unknown) => (name as string).replace('operations/', '');
      expect((await s.engine.get('token:alice', id(byToken.body.name))).owner).toBe('token:alice');
      expect((await s.engine.get('jwt:https://login.test/#alice', id(byJwt.body.name))).owner).toBe(
        'jwt:https://login.test/#alice',
      );
    } finally {
      await s.close();
    }
  });

  it('a non-loopback host without --auth warns, naming what anonymous callers can do', async () => {
    const warnings: string[] = [];
    expect(await serveAuth({}, { host: '0.0.0.0', stdio: false, logger: silent(warnings) })).toBeUndefined();
    expect(warnings.join('\n')).toMatch(
      /without authentication: anyone who can reach this port can list the tools, start any/,
    );
    const quiet: string[] = [];
    await serveAuth({}, { host: '127.0.0.1', stdio: false, logger: silent(quiet) });
    expect(quiet).toEqual([]);
  });

  it('firstOf answers the last rejection when no hook names a principal', async () => {
    const hook = firstOf(createBearerAuth({ tokens: { [ALICE_TOKEN]: 'alice' } }));
    const s = await serve(hook);
    try {
      expect((await aip(s.base, 'GET', '/v1/operations', undefined)).status).toBe(401);
    } finally {
      await s.close();
    }
  });
});

function silent(warnings: string[]) {
  return { debug: () => {}, info: () => {}, warn: (m: string) => void warnings.push(m), error: () => {} };
}
