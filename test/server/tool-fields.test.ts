import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Logger } from '../../src/core/ports.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createWireRegistry } from '../../src/server/wire/registry.js';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { LegacySession } from '../wires/helpers.js';
import { createTask, isTerminalStatus, pollUntil, rpc } from './helpers.js';

/**
 * Issue 15 item 2: a task tool has every field of an MCP tool, listed on every wire, and its
 * `outputSchema` is enforced on the result. The engine takes no clock, ids or random (the system
 * ones), and a handler's exception is logged with its task id and epoch.
 */
const entries: { level: string; message: string; fields: Record<string, unknown> }[] = [];
const logger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (message, fields = {}) => entries.push({ level: 'warn', message, fields }),
  error: (message, fields = {}) => entries.push({ level: 'error', message, fields }),
};

const report = defineTaskTool({
  name: 'report',
  title: 'Quarterly report',
  description: 'Builds a report',
  inputSchema: z.object({ pages: z.number().int(), mode: z.enum(['ok', 'bad', 'none', 'throw']).default('ok') }),
  outputSchema: z.object({ pages: z.number().int(), url: z.string() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  icons: [{ src: 'https://example.com/report.png', mimeType: 'image/png', sizes: ['48x48'] }],
  _meta: { 'example.com/owner': 'reports-team' },
  ttlMs: 60_000,
  handler: async ({ pages, mode }) => {
    if (mode === 'throw') throw new Error('disk full');
    if (mode === 'none') return { content: [{ type: 'text', text: 'no structure' }] };
    const structuredContent =
      mode === 'bad'
        ? ({ pages: 'many', url: 7 } as unknown as { pages: number; url: string })
        : { pages, url: 'r.pdf' };
    return { content: [{ type: 'text', text: `${pages} pages` }], structuredContent };
  },
});

// SEP-1613 / SEP-2106: what zod writes and `.meta()` adds is listed as written.
const address = z.object({ city: z.string() }).meta({ id: 'tool_fields_address', $anchor: 'addressDef' });
const contact = defineTaskTool({
  name: 'contact',
  description: 'Stores a contact',
  inputSchema: z
    .object({ address: address.optional(), phone: z.string().optional(), email: z.string().optional() })
    .strict()
    .meta({ if: { required: ['phone'] }, then: { required: ['phone'] }, else: { required: ['email'] } }),
  handler: async () => ({ content: [] }),
});

let engine: TaskEngine;
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const store = createMemoryTaskStore();
  // No clock, ids or random: the system ones (item 2).
  engine = createEngine({ store, tools: [report, contact], logger, claimIntervalMs: 20 });
  engine.start();
  const registry = createWireRegistry();
  const server = createTerminusServer({ engine, wires: registry.adapters });
  const http = await server.serveHttp({ port: 0 });
  url = http.url;
  close = async () => {
    await http.close();
    await engine.stop();
    await store.close();
  };
});
afterAll(() => close());

const expectedFields = {
  name: 'report',
  title: 'Quarterly report',
  description: 'Builds a report',
  annotations: { readOnlyHint: true, openWorldHint: false },
  icons: [{ src: 'https://example.com/report.png', mimeType: 'image/png', sizes: ['48x48'] }],
  _meta: { 'example.com/owner': 'reports-team' },
};

describe('tools/list shows every field of a task tool', () => {
  it('on the 2026-07-28 Tasks extension wire', async () => {
    const answer = await rpc(url, 'tools/list');
    const [tool] = answer.result.tools;
    expect(tool).toMatchObject(expectedFields);
    expect(tool.outputSchema).toMatchObject({
      type: 'object',
      properties: { pages: { type: 'integer' }, url: { type: 'string' } },
      required: ['pages', 'url'],
    });
    expect(tool.outputSchema.$schema).toBeUndefined();
  });

  it('the input schema keeps its 2020-12 $schema, $defs, $anchor, if/then/else and additionalProperties', async () => {
    const answer = await rpc(url, 'tools/list');
    const tool = answer.result.tools.find((t: { name: string }) => t.name === 'contact');
    expect(tool.inputSchema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { address: { $ref: '#/$defs/tool_fields_address' } },
      $defs: { tool_fields_address: { $anchor: 'addressDef' } },
      if: { required: ['phone'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    });
  });

  it('on the 2025-11-25 wire (with execution.taskSupport) and to a SEP-1391 async client', async () => {
    for (const [capabilities, extra] of [
      [{}, {}],
      [{ experimental: { [SEP1391_CAPABILITY]: {} } }, { invocationMode: 'async' }],
    ] as const) {
      const session = await LegacySession.open(url, undefined, capabilities);
      const reply = await session.request('tools/list');
      const [tool] = reply.result.tools;
      expect(tool).toMatchObject({ ...expectedFields, execution: { taskSupport: 'optional' }, ...extra });
      expect(tool.outputSchema.properties.url).toEqual({ type: 'string' });
      await session.close();
    }
  });
});

describe('outputSchema is enforced on the result', () => {
  it('a conforming structuredContent is the task result', async () => {
    const taskId = await createTask(url, 'report', { pages: 3 });
    const task = await pollUntil(url, taskId, isTerminalStatus);
    expect(task.status).toBe('completed');
    expect(task.result.structuredContent).toEqual({ pages: 3, url: 'r.pdf' });
    expect(task.result.isError).toBeUndefined();
  });

  it('a mismatch ends the task as a tool error naming the fields', async () => {
    const taskId = await createTask(url, 'report', { pages: 3, mode: 'bad' });
    const task = await pollUntil(url, taskId, isTerminalStatus);
    expect(task.status).toBe('completed');
    expect(task.result.isError).toBe(true);
    expect(task.result.structuredContent).toBeUndefined();
    expect(task.result.content[0].text).toMatch(/does not match its outputSchema: pages: .*; url: /);
  });

  it('a missing structuredContent is a tool error too', async () => {
    const taskId = await createTask(url, 'report', { pages: 1, mode: 'none' });
    const task = await pollUntil(url, taskId, isTerminalStatus);
    expect(task.result).toMatchObject({ isError: true });
    expect(task.result.content[0].text).toBe('Tool report has an outputSchema but returned no structuredContent');
  });

  it('inline (the caller did not declare tasks): the same check', async () => {
    const answer = await rpc(
      url,
      'tools/call',
      { name: 'report', arguments: { pages: 2, mode: 'bad' } },
      { declare: false },
    );
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toMatch(/does not match its outputSchema/);
  });
});

describe('a handler exception is logged with its task id and epoch', () => {
  it('on a task', async () => {
    const taskId = await createTask(url, 'report', { pages: 1, mode: 'throw' });
    const task = await pollUntil(url, taskId, isTerminalStatus);
    expect(task.result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'disk full' }] });
    const entry = entries.find((e) => e.fields.taskId === taskId);
    expect(entry).toMatchObject({
      level: 'error',
      message: 'tool handler threw',
      fields: { taskId, epoch: 1, tool: 'report', error: 'disk full' },
    });
    expect(entry?.fields.stack).toMatch(/disk full/);
  });
});
