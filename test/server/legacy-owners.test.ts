import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import type { Logger } from '../../src/core/ports.js';
import { adoptOwnersAtStart, operatorPrincipals, serveAuth, type AuthFlags } from '../../src/cli/serve-auth.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { killAll, startServe, tempDir } from '../cli/helpers.js';

/**
 * Issue 30: owners name their auth source (`token:<id>`, `jwt:<issuer>#<sub>`), so tasks stored
 * before, under `auth:<id>`, are given at start to the source that made them: with one source they
 * can only be its own; with both, `--legacy-owners` says which, and without it they are left to no
 * caller (never granted across sources) with a warning naming the flag.
 */
const ISSUER = 'https://login.test/';
const AUDIENCE = 'legacy-test';
const ALICE_TOKEN = 'alice-0123456789abcdef';
let dir: string;
let privateKey: CryptoKey;
let flags: { tokens: AuthFlags; jwt: AuthFlags; both: AuthFlags };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-legacy-owners-'));
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ [ALICE_TOKEN]: 'alice' }));
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' };
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
  const tokens = { authTokens: join(dir, 'tokens.json') };
  const jwt = { authJwks: join(dir, 'jwks.json'), authIssuer: ISSUER, authAudience: AUDIENCE };
  flags = { tokens, jwt, both: { ...tokens, ...jwt } };
});
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
/** A SQLite file as an older server left it: tasks and keys under `auth:<clientId>`. */
async function legacyStore(): Promise<{ store: TaskStore; path: string; ids: string[] }> {
  const path = join(dir, `legacy-${(files += 1)}.db`);
  const store = await openSqliteTaskStore({ path });
  const ids: string[] = [];
  for (const [i, owner] of ['auth:alice', 'auth:alice', 'auth:bob'].entries()) {
    const id = `legacy-${files}-${i}`;
    ids.push(id);
    await store.create({
      id,
      owner,
      tool: 'build_report',
      args: { title: `t${i}` },
      requestDigest: requestDigest('build_report', { title: `t${i}` }),
      submissionKey: i === 0 ? 'my-key' : null,
      wire: 'aip-151',
      ttlMs: null,
      keepAliveMs: null,
      pollIntervalMs: 1000,
      now: Date.now(),
    });
  }
  return { store, path, ids };
}

function recording(): Logger & { readonly lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('tasks stored as auth:<client id> at start', () => {
  it('one source (--auth-tokens): they become token:<id>, keys included; said once at info', async () => {
    const { store, ids } = await legacyStore();
    const logger = recording();
    await adoptOwnersAtStart(flags.tokens, store, logger);
    expect(await store.get('token:alice', ids[0]!, Date.now())).toMatchObject({ owner: 'token:alice' });
    expect(await store.get('token:bob', ids[2]!, Date.now())).not.toBeNull();
    expect(await store.get('auth:alice', ids[0]!, Date.now())).toBeNull();
    expect(await store.lookupKey('token:alice', 'my-key', Date.now())).toMatchObject({ kind: 'found' });
    expect(logger.lines).toEqual([
      {
        level: 'info',
        message: expect.stringContaining(
          'owners: 3 task(s) stored as auth:<client id> now belong to token:<client id> (--auth-tokens)',
        ),
      },
    ]);
    const again = recording();
    await adoptOwnersAtStart(flags.tokens, store, again);
    expect(again.lines).toEqual([]);
    await store.close();
  });

  it('one source (--auth-jwks): they become jwt:<issuer>#<sub>', async () => {
    const { store, ids } = await legacyStore();
    await adoptOwnersAtStart(flags.jwt, store, recording());
    expect(await store.get('jwt:https://login.test/#alice', ids[1]!, Date.now())).not.toBeNull();
    await store.close();
  });

  it('both sources without --legacy-owners: nobody gets them (no grant across sources), and a warning names the flag', async () => {
    const { store, ids } = await legacyStore();
    const logger = recording();
    await adoptOwnersAtStart(flags.both, store, logger);
    expect(logger.lines).toEqual([
      {
        level: 'warn',
        message: expect.stringContaining(
          'owners: 3 task(s) stored as auth:<client id> belong to no caller: with both --auth-tokens and --auth-jwks',
        ),
      },
    ]);
    expect(logger.lines[0]!.message).toContain('--legacy-owners token (or jwt)');
    for (const owner of ['token:alice', 'jwt:https://login.test/#alice']) {
      expect(await store.get(owner, ids[0]!, Date.now())).toBeNull();
    }
    await adoptOwnersAtStart({ ...flags.both, legacyOwners: 'jwt' }, store, recording());
    expect(await store.get('jwt:https://login.test/#alice', ids[0]!, Date.now())).not.toBeNull();
    expect(await store.get('token:alice', ids[0]!, Date.now())).toBeNull();
    await store.close();
  });

  it('--legacy-owners naming a source that is not configured is refused before anything opens', async () => {
    const codes: unknown[] = [];
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      codes.push(code);
      throw new Error('exit');
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await expect(
        serveAuth({ ...flags.tokens, legacyOwners: 'jwt' }, { host: '127.0.0.1', stdio: false, logger: recording() }),
      ).rejects.toThrow('exit');
      expect(stderr).toHaveBeenCalledWith('terminus serve: --legacy-owners jwt needs --auth-jwks\n');
    } finally {
      exit.mockRestore();
      stderr.mockRestore();
    }
    expect(codes).toEqual([2]);
  });

  it('terminus serve --auth-tokens on an older database: the token reads its task at once', async () => {
    const { store, path, ids } = await legacyStore();
    await store.close();
    const work = tempDir('terminus-legacy-serve-');
    try {
      const served = await startServe(work.path, ['--db', path, '--auth-tokens', join(dir, 'tokens.json')]);
      const base = served.url.replace(/\/mcp$/, '');
      const read = await fetch(`${base}/v1/operations/${ids[0]!}`, {
        headers: { authorization: `Bearer ${ALICE_TOKEN}` },
      });
      expect(read.status).toBe(200);
      // Bob's task is bob's: alice's token does not reach it.
      const foreign = await fetch(`${base}/v1/operations/${ids[2]!}`, {
        headers: { authorization: `Bearer ${ALICE_TOKEN}` },
      });
      expect(foreign.status).toBe(404);
      await served.stop();
    } finally {
      work.remove();
    }
  });
});

describe('--console-operator names a principal', () => {
  it('a bare id names the one source; token:/jwt: name theirs; a bare id with both sources is refused', async () => {
    expect(operatorPrincipals(flags.tokens, ['ops'])).toEqual(['token:ops']);
    expect(operatorPrincipals(flags.jwt, ['ops'])).toEqual(['jwt:https://login.test/#ops']);
    expect(operatorPrincipals(flags.both, ['token:ops', 'jwt:boss'])).toEqual([
      'token:ops',
      'jwt:https://login.test/#boss',
    ]);
    expect(() => operatorPrincipals(flags.both, ['ops'])).toThrow(
      '--console-operator ops is ambiguous with both --auth-tokens and --auth-jwks: write token:ops or jwt:ops',
    );
    expect(() => operatorPrincipals(flags.tokens, ['jwt:ops'])).toThrow('names --auth-jwks, which is not given');
    // A JWT operator is recognised by its principal, not by a token with the same client id.
    const hook = await serveAuth(flags.both, { host: '127.0.0.1', stdio: false, logger: recording() });
    const jwt = await new SignJWT({ sub: 'boss' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(privateKey);
    const info = await hook!({ headers: { authorization: `Bearer ${jwt}` } } as never);
    expect(info?.extra).toEqual({ 'mcp-terminus/principal': 'jwt:https://login.test/#boss' });
  });
});
