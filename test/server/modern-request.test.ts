import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { modernRequestRevision } from '../../src/server/http/modern-request.js';

// Issue 14: the fast path's own check must decide exactly as the SDK's classifier does (X-40: the
// envelope and header checks are the SDK's). Every body below goes through both, with several
// header pairs each, and the decisions must be identical: the revision of a modern request, or
// "not a modern request" for everything else (the fast path then hands it to the SDK, whose
// answer the client gets). Every body is made by JSON.parse, as the bridge makes them: own
// `__proto__` members and the infinities of `1e400` included.

const PV = 'io.modelcontextprotocol/protocolVersion';
const INFO = 'io.modelcontextprotocol/clientInfo';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const LEVEL = 'io.modelcontextprotocol/logLevel';
const RELATED = 'io.modelcontextprotocol/related-task';
const EXT = 'io.modelcontextprotocol/tasks';
const INF = '\u0000inf';
const NEG_INF = '\u0000-inf';

type Json = unknown;

/** A body as the bridge has it: written as JSON text, then parsed (`__proto__` stays an own member). */
function parsed(value: Json): unknown {
  const text = JSON.stringify(value)
    .replaceAll(JSON.stringify(INF), '1e400')
    .replaceAll(JSON.stringify(NEG_INF), '-1e400');
  return JSON.parse(text);
}

/** An object with an own `__proto__` member (an object literal would set the prototype instead). */
function withProto(base: Record<string, Json>, value: Json): Record<string, Json> {
  const out = { ...base };
  Object.defineProperty(out, '__proto__', { value, enumerable: true, writable: true, configurable: true });
  return out;
}

function nested(depth: number, leaf: Json, asArray = false): Json {
  let value = leaf;
  for (let i = 0; i < depth; i += 1) value = asArray ? [value] : { a: value };
  return value;
}

function envelope(extra: Record<string, Json> = {}): Record<string, Json> {
  return {
    [PV]: '2026-07-28',
    [INFO]: { name: 'client', version: '1.0.0' },
    [CAPS]: { extensions: { [EXT]: {} } },
    ...extra,
  };
}

function request(method: string, params: Record<string, Json>, extra: Record<string, Json> = {}): Record<string, Json> {
  return { jsonrpc: '2.0', id: 1, method, params, ...extra };
}

/** Valid modern requests: every optional envelope member spelled, each the way the schema allows. */
function validBases(): Record<string, Json>[] {
  const richCaps = {
    experimental: { x: { a: [1, 'b', null, true, { c: 1.5 }] } },
    sampling: { context: {}, tools: { deep: { deeper: [] } } },
    elicitation: { form: { applyDefaults: true, other: 1 }, url: {} },
    roots: { listChanged: false },
    extensions: { [EXT]: {}, 'x/y': { k: 'v' } },
    tasks: 'ignored by the 2026 schema',
    unknownCap: [1, 2],
  };
  return [
    request('tasks/get', { taskId: 't1', _meta: envelope() }),
    request('tasks/get', { taskId: 't1', _meta: { [PV]: '2026-07-28', [CAPS]: {} } }),
    request('tasks/cancel', { taskId: 't1', _meta: envelope({ progressToken: 'p', [LEVEL]: 'debug' }) }),
    request('tasks/update', { taskId: 't1', inputResponses: {}, _meta: envelope({ progressToken: 7 }) }),
    request('terminus/tasks/lookup', { submissionKey: 'k', _meta: envelope({ [RELATED]: { taskId: 'r' } }) }),
    request('tools/call', { name: 'x', arguments: {}, _meta: envelope({ [CAPS]: richCaps }) }),
    request('initialize', { _meta: envelope() }),
    request('initialize', { _meta: envelope({ [PV]: '2099-01-01' }) }),
    request('tasks/get', { taskId: 't1', _meta: envelope({ [PV]: '2099-01-01' }) }),
    request('tasks/get', { taskId: 't1', _meta: envelope({ [PV]: '2025-11-25' }) }),
    request('tasks/get', {
      taskId: 't1',
      _meta: envelope({
        [INFO]: {
          name: 'c',
          version: '1',
          title: 't',
          websiteUrl: 'https://x',
          description: 'd',
          icons: [{ src: 's', mimeType: 'image/png', sizes: ['16x16'], theme: 'dark' }, { src: 's2' }],
        },
      }),
    }),
    { ...request('tasks/get', { taskId: 't1', _meta: envelope() }), id: 'string-id' },
    { ...request('tasks/get', { taskId: 't1', _meta: envelope() }), id: Number.MAX_SAFE_INTEGER },
    { ...request('tasks/get', { taskId: 't1', _meta: envelope() }), id: -Number.MAX_SAFE_INTEGER },
    { ...request('tasks/get', { taskId: 't1', _meta: envelope() }), id: 0 },
    request('', { _meta: envelope() }),
    request('constructor', { _meta: envelope() }),
  ];
}

/** What to put where a value was: every JSON type, the number edges, the odd objects. */
function oddValues(): Json[] {
  return [
    null,
    0,
    -0,
    1,
    1.5,
    -1,
    2 ** 53,
    2 ** 53 - 1,
    -(2 ** 53),
    1e21,
    INF,
    NEG_INF,
    '',
    'x',
    '2.0',
    '2026-07-28',
    ' 2026-07-28',
    true,
    false,
    [],
    [1],
    [{}],
    {},
    { a: 1 },
    { a: INF },
    { taskId: 'r' },
    { name: 'n', version: 'v' },
    withProto({}, 1),
    withProto({}, { a: 1 }),
    withProto({}, INF),
    nested(60, 1),
    nested(60, INF),
    nested(60, 1, true),
    'x'.repeat(100_000),
  ];
}

/** Every path to a value inside `value`, objects and arrays alike. */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([...prefix, i], ...paths(item, [...prefix, i]));
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      out.push([...prefix, key], ...paths((value as Record<string, Json>)[key], [...prefix, key]));
    }
  }
  return out;
}

function clone(value: Json): Json {
  if (Array.isArray(value)) return value.map(clone);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, Json> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, {
      value: clone((value as Record<string, Json>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** `value` with the node at `path` replaced (`set`), deleted (`undefined`), or given an extra member. */
function edit(value: Json, path: (string | number)[], change: (parent: Record<string, Json>, key: string) => void) {
  const copy = clone(value);
  let node = copy as Record<string, Json>;
  for (const step of path.slice(0, -1)) node = node[step as string] as Record<string, Json>;
  change(node, String(path.at(-1)));
  return copy;
}

function setAt(parent: Record<string, Json>, key: string, next: Json): void {
  Object.defineProperty(parent, key, { value: clone(next), enumerable: true, writable: true, configurable: true });
}

/** Every mutation of every valid base: each value replaced by each odd value, deleted, or joined by extra keys. */
function mutated(): Json[] {
  const out: Json[] = [];
  const extras: [string, Json][] = [
    ['extra', 1],
    ['__proto__', {}],
    ['__proto__', 1],
    ['constructor', {}],
    ['toString', 'x'],
    ['result', {}],
    ['error', { code: 1, message: 'm' }],
  ];
  for (const base of validBases()) {
    for (const path of paths(base)) {
      out.push(edit(base, path, (parent, key) => void delete parent[key]));
      for (const value of oddValues()) out.push(edit(base, path, (parent, key) => setAt(parent, key, value)));
    }
    // Extra members on every object node, the message itself included.
    const objectPaths = [[], ...paths(base)].filter((path) => {
      let node = base as Json;
      for (const step of path) node = (node as Record<string, Json>)[step as string];
      return typeof node === 'object' && node !== null && !Array.isArray(node);
    });
    for (const path of objectPaths) {
      for (const [key, value] of extras) {
        out.push(edit(base, [...path, key], (parent, name) => setAt(parent, name, value)));
      }
    }
  }
  return out;
}

/** Whole bodies that are not single requests: batches, notifications, responses, primitives. */
function shapes(): Json[] {
  const valid = request('tasks/get', { taskId: 't1', _meta: envelope() });
  const legacy = request('tasks/get', { taskId: 't1' });
  const notification = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: envelope() } };
  return [
    null,
    0,
    'x',
    true,
    [],
    [valid],
    [legacy],
    [legacy, legacy],
    [legacy, 1],
    [notification],
    notification,
    { ...notification, params: { _meta: { [PV]: 5 } } },
    { ...notification, params: { _meta: { [PV]: '2025-11-25' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 1, result: { _meta: envelope() } },
    { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'm' } },
    { jsonrpc: '2.0', error: { code: -32600, message: 'm' } },
    { ...valid, result: {} },
    { ...valid, error: { code: 1, message: 'm' } },
    legacy,
    request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } }),
    request('tasks/get', { taskId: 't1', _meta: {} }),
    request('tasks/get', { taskId: 't1', _meta: { [CAPS]: {} } }),
    request('initialize', { _meta: { [PV]: '2026-07-28' } }),
    nested(200, valid),
    nested(200, valid, true),
  ];
}

/** A small seeded generator (mulberry32): the corpus is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random message-like bodies from the vocabulary the schemas read, mostly close to valid. */
function fuzzed(count: number): Json[] {
  const next = random(14);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const odd = oddValues().filter((v) => typeof v !== 'string' || v.length < 100);
  const keys = [
    'jsonrpc', 'id', 'method', 'params', 'result', 'error', '_meta', 'taskId', 'progressToken', PV, INFO, CAPS,
    LEVEL, RELATED, 'name', 'version', 'title', 'icons', 'src', 'theme', 'sizes', 'experimental', 'sampling',
    'context', 'tools', 'elicitation', 'form', 'url', 'applyDefaults', 'roots', 'listChanged', 'extensions',
    '__proto__', 'constructor',
  ]; // prettier-ignore
  const value = (depth: number): Json => {
    const roll = next();
    if (depth > 4 || roll < 0.35) return pick(odd);
    if (roll < 0.45) return Array.from({ length: Math.floor(next() * 3) }, () => value(depth + 1));
    const out: Record<string, Json> = {};
    for (let i = Math.floor(next() * 4); i > 0; i -= 1) setAt(out, pick(keys), value(depth + 1));
    return out;
  };
  const bases = validBases();
  const out: Json[] = [];
  for (let i = 0; i < count; i += 1) {
    const base = clone(pick(bases));
    const all = paths(base);
    // One to three random changes to a valid base: a replaced value, a new member, a removed one.
    for (let n = 1 + Math.floor(next() * 3); n > 0; n -= 1) {
      const path = pick(all);
      const roll = next();
      let node = base as Record<string, Json>;
      for (const step of path.slice(0, -1)) {
        const child = node?.[step as string];
        node = child as Record<string, Json>;
      }
      if (typeof node !== 'object' || node === null) continue;
      if (roll < 0.5) setAt(node, String(path.at(-1)), value(0));
      else if (roll < 0.8) setAt(node, pick(keys), value(0));
      else delete node[String(path.at(-1))];
    }
    out.push(base);
  }
  return out;
}

interface Headers {
  readonly protocolVersionHeader?: string;
  readonly mcpMethodHeader?: string;
}

function headerPairs(body: unknown): Headers[] {
  const method =
    typeof body === 'object' && body !== null && typeof (body as { method?: unknown }).method === 'string'
      ? (body as { method: string }).method
      : 'tasks/get';
  const versions = [undefined, '2026-07-28', ' 2026-07-28\t', '2025-11-25', '2099-01-01', ''];
  const methods = [undefined, method, `\t${method} `, 'tools/list', ''];
  return versions.flatMap((protocolVersionHeader) =>
    methods.map((mcpMethodHeader) => ({
      ...(protocolVersionHeader === undefined ? {} : { protocolVersionHeader }),
      ...(mcpMethodHeader === undefined ? {} : { mcpMethodHeader }),
    })),
  );
}

/** The SDK's decision, and the ladder cell it names (to show the corpus reaches every rung). */
function sdkDecision(body: unknown, headers: Headers): { revision: string | undefined; cell: string } {
  const route = classifyInboundRequest({ httpMethod: 'POST', body, ...headers });
  if (route.kind === 'reject') return { revision: undefined, cell: route.cell };
  if (route.kind === 'legacy') return { revision: undefined, cell: `legacy:${route.reason}` };
  const revision = route.messageKind === 'request' ? route.classification.revision : undefined;
  return { revision, cell: `modern:${route.messageKind}` };
}

describe('the fast path decides as the SDK classifier does (issue 14)', () => {
  it('gives the same decision for every body of a generated corpus, with every header pair', () => {
    const corpus = [...validBases(), ...mutated(), ...shapes(), ...fuzzed(4_000)].map(parsed);
    const cells = new Map<string, number>();
    const mismatches: string[] = [];
    let accepted = 0;
    let decisions = 0;
    corpus.forEach((body, index) => {
      // The full header product on the first bodies; two pairs by turns on the rest (time).
      const pairs = headerPairs(body);
      const chosen = index < 200 ? pairs : [pairs[index % pairs.length]!, pairs[(index * 7 + 3) % pairs.length]!];
      for (const headers of chosen) {
        const sdk = sdkDecision(body, headers);
        const ours = modernRequestRevision(body, headers.protocolVersionHeader, headers.mcpMethodHeader);
        decisions += 1;
        cells.set(sdk.cell, (cells.get(sdk.cell) ?? 0) + 1);
        if (sdk.revision !== undefined) accepted += 1;
        if (ours !== sdk.revision && mismatches.length < 5) {
          mismatches.push(
            `${JSON.stringify(headers)} ${JSON.stringify(body).slice(0, 400)}: ours ${ours}, SDK ${sdk.revision}`,
          );
        }
      }
    });
    expect(mismatches).toEqual([]);
    // The corpus is wide: thousands of decisions, both answers common, every rung of the ladder hit.
    expect(decisions).toBeGreaterThan(30_000);
    expect(accepted).toBeGreaterThan(1_000);
    expect(decisions - accepted).toBeGreaterThan(10_000);
    expect([...cells.keys()].sort()).toEqual(
      expect.arrayContaining([
        'batch-with-invalid-element',
        'batch-with-modern-element',
        'empty-batch',
        'envelope-invalid',
        'header-body-version-mismatch',
        'initialize-with-modern-header',
        'invalid-json-rpc-body',
        'legacy:batch',
        'legacy:initialize',
        'legacy:no-claim',
        'legacy:notification',
        'legacy:response',
        'method-header-mismatch',
        'modern-header-without-claim',
        'modern:notification',
        'modern:request',
        'notification-envelope-invalid',
      ]),
    );
  });

  it('reads the headers as the SDK does: optional whitespace stripped, the claim and the method compared', () => {
    const body = parsed(request('tasks/get', { taskId: 't1', _meta: envelope() }));
    expect(modernRequestRevision(body, ' \t2026-07-28 ', '\ttasks/get')).toBe('2026-07-28');
    expect(modernRequestRevision(body, '2026-07-28', undefined)).toBe('2026-07-28');
    expect(modernRequestRevision(body, '2025-11-25', 'tasks/get')).toBeUndefined();
    expect(modernRequestRevision(body, '2026-07-28', 'tasks/cancel')).toBeUndefined();
    expect(modernRequestRevision(body, '\u00a02026-07-28', 'tasks/get')).toBeUndefined();
  });

  it('refuses an own __proto__ member at the top (zod: an unknown key) and ignores one inside a record', () => {
    const base = request('tasks/get', { taskId: 't1', _meta: envelope() });
    expect(modernRequestRevision(parsed(withProto(base, {})), undefined, undefined)).toBeUndefined();
    const caps = envelope({ [CAPS]: { extensions: withProto({ [EXT]: {} }, 'not an object') } });
    const inRecord = parsed(request('tasks/get', { taskId: 't1', _meta: caps }));
    expect(sdkDecision(inRecord, {}).revision).toBe('2026-07-28');
    expect(modernRequestRevision(inRecord, undefined, undefined)).toBe('2026-07-28');
  });
});
