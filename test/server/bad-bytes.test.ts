import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstInvalidUtf8 } from '../../src/server/http/edge.js';
import { PROTOCOL } from './helpers.js';
import { ALICE, startWireServer, type Json, type WireServer } from '../wires/helpers.js';

/**
 * Issue 30: bytes that are not UTF-8 are a parse error on every wire (HTTP `/mcp` -32700, AIP-151
 * 400, stdio -32700), and a JSON string escaping a lone UTF-16 surrogate (`"\ud800"`, which no UTF-8
 * text can hold) is `invalid_argument` naming the field; either way nothing is stored. Without
 * these, the bad bytes became U+FFFD and the task stored a string the client never sent, and a lone
 * surrogate failed PostgreSQL's `jsonb` as an internal error.
 */
let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server.close();
});

const KEY_META = 'mcp-terminus.dev/submissionKey';
const stored = async () =>
  (await server.engine.list('anonymous', { limit: 1000 })).tasks.length +
  (await server.engine.list('auth:alice', { limit: 1000 })).tasks.length;

/** A 2026-07-28 `tools/call` of `work` whose `text` argument is `text` as raw JSON bytes. */
function toolCall(id: number, textJson: Buffer, meta: Record<string, unknown> = {}): Buffer {
  const head = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'work',
      arguments: { text: '@@' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL,
        'io.modelcontextprotocol/clientInfo': { name: 'bytes', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        ...meta,
      },
    },
  });
  const [before, after] = head.split('"@@"') as [string, string];
  return Buffer.concat([Buffer.from(before), textJson, Buffer.from(after)]);
}

async function postMcp(body: Buffer, token?: string): Promise<{ status: number; body: Json }> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': 'tools/call',
      'mcp-name': 'work',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body,
  });
  const text = await response.text();
  const json = text.startsWith('event:') || text.startsWith('data:') ? JSON.parse(text.split('data: ')[1] ?? '') : text;
  return { status: response.status, body: typeof json === 'string' ? JSON.parse(json) : json };
}

async function postAip(body: Buffer): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${server.base}/v1/tools/work:run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body,
  });
  return { status: response.status, body: (await response.json()) as Json };
}

/** `"caf\xc3"`, `"\xff"`, an overlong `/`, a UTF-8-encoded surrogate: four ways bytes are not UTF-8. */
const BAD_BYTES = [
  Buffer.from([0x22, 0x63, 0x61, 0x66, 0xc3, 0x22]),
  Buffer.from([0x22, 0xff, 0x22]),
  Buffer.from([0x22, 0xc0, 0xaf, 0x22]),
  Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]),
];
const LONE_SURROGATES = ['"\\ud800"', '"a\\udc00b"', '"\\udbff\\udbff"'];

it('firstInvalidUtf8 finds the first bad byte; valid text (4-byte characters too) has none', () => {
  expect(firstInvalidUtf8(Buffer.from('héllo 😀 ✓'))).toBe(Buffer.from('héllo 😀 ✓').length);
  expect(firstInvalidUtf8(Buffer.from([0x61, 0xff]))).toBe(1);
  expect(firstInvalidUtf8(Buffer.from([0x61, 0xe2, 0x82]))).toBe(1); // cut short
  expect(firstInvalidUtf8(Buffer.from([0xf4, 0x90, 0x80, 0x80]))).toBe(0); // above U+10FFFF
});

describe('HTTP', () => {
  it('/mcp: a body that is not UTF-8 is the parse error -32700 (HTTP 400) naming the byte; nothing stored', async () => {
    const before = await stored();
    for (const [i, bad] of BAD_BYTES.entries()) {
      for (const token of [undefined, ALICE]) {
        const answer = await postMcp(toolCall(i + 1, bad), token);
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({ code: -32700, data: { reason: 'invalid_utf8' } });
        expect(answer.body.error.message).toMatch(/^Parse error: the body is not valid UTF-8 \(byte \d+\)/);
      }
    }
    expect(await stored()).toBe(before);
  });

  it('AIP-151 :run: a body that is not UTF-8 is 400 INVALID_ARGUMENT INVALID_UTF8; nothing stored', async () => {
    const before = await stored();
    for (const bad of BAD_BYTES) {
      const body = Buffer.concat([Buffer.from('{"arguments":{"text":'), bad, Buffer.from('}}')]);
      const answer = await postAip(body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ status: 'INVALID_ARGUMENT' });
      expect(answer.body.error.details[0].reason).toBe('INVALID_UTF8');
    }
    expect(await stored()).toBe(before);
  });

  it('a lone surrogate escape in an argument or a submission key is -32602 / 400 naming the field; nothing stored', async () => {
    const before = await stored();
    for (const [i, escaped] of LONE_SURROGATES.entries()) {
      const answer = await postMcp(toolCall(100 + i, Buffer.from(escaped)), ALICE);
      expect(answer.body.error).toMatchObject({ code: -32602 });
      expect(answer.body.error.message).toContain('arguments.text is not valid Unicode');
      const aip = await postAip(Buffer.from(`{"arguments":{"text":${escaped}}}`));
      expect(aip.status).toBe(400);
      expect(aip.body.error.message).toContain('arguments.text is not valid Unicode');
      const key = await postMcp(toolCall(200 + i, Buffer.from('"ok"'), { [KEY_META]: JSON.parse(escaped) }), ALICE);
      expect(key.body.error).toMatchObject({ code: -32602 });
      expect(key.body.error.message).toContain('the submission key is not valid Unicode');
    }
    // A well-formed pair is fine: the same escapes, paired, make one astral character.
    const paired = await postMcp(toolCall(300, Buffer.from('"\\ud83d\\ude00"')), ALICE);
    expect(paired.body.result?.resultType).toBe('task');
    expect(await stored()).toBe(before + 1);
  });
});

describe('terminus serve --stdio', () => {
  const root = new URL('../..', import.meta.url).pathname;
  const dir = mkdtempSync(join(tmpdir(), 'terminus-stdio-bytes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a line that is not UTF-8 is -32700 with its id, a lone surrogate -32602; the next request is served; nothing stored', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--stdio', '--db', join(dir, 'bytes.db')],
      { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] },
    );
    const answers = new Map<unknown, Json>();
    const waiters = new Map<unknown, () => void>();
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line);
      answers.set(message.id, message);
      waiters.get(message.id)?.();
    });
    const send = (bytes: Buffer, id: unknown) =>
      new Promise<Json>((resolve) => {
        waiters.set(id, () => resolve(answers.get(id)));
        child.stdin.write(Buffer.concat([bytes, Buffer.from('\n')]));
      });
    const call = (id: number, text: Buffer) =>
      Buffer.concat([
        Buffer.from(
          `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"build_report","task":{},"arguments":{"title":`,
        ),
        text,
        Buffer.from(',"sections":1,"sectionSeconds":0}}}'),
      ]);
    try {
      await send(
        Buffer.from(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
          }),
        ),
        1,
      );
      child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      for (const [i, bad] of BAD_BYTES.entries()) {
        const answer = await send(call(10 + i, bad), 10 + i);
        expect(answer.error.code).toBe(-32700);
        expect(answer.error.message).toMatch(/^Parse error: the line is not valid UTF-8 \(byte \d+\)/);
      }
      // Bad bytes inside the id itself: the answer cannot name it, so its id is null.
      const noId = await send(
        Buffer.concat([
          Buffer.from('{"jsonrpc":"2.0","id":"'),
          BAD_BYTES[1]!.subarray(1, 2),
          Buffer.from('","method":"ping"}'),
        ]),
        null,
      );
      expect(noId.error.code).toBe(-32700);
      for (const [i, escaped] of LONE_SURROGATES.entries()) {
        const answer = await send(call(20 + i, Buffer.from(escaped)), 20 + i);
        expect(answer.error.code).toBe(-32602);
        expect(answer.error.message).toContain('arguments.title is not valid Unicode');
      }
      const listed = await send(Buffer.from('{"jsonrpc":"2.0","id":30,"method":"tasks/list","params":{}}'), 30);
      expect(listed.result.tasks).toEqual([]);
      const ok = await send(call(31, Buffer.from('"fine ✓"')), 31);
      expect(ok.result.task.status).toBe('working');
    } finally {
      child.kill('SIGTERM');
    }
  }, 30_000);
});
