import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { rpc, startServer, type TestServer } from './helpers.js';

/**
 * SEP-2243 custom parameter headers on a task tool (2026-07-28 Streamable HTTP): an argument marked
 * `x-mcp-header` is mirrored in `Mcp-Param-<name>`; a missing, undecodable or different header is
 * refused with -32020 and HTTP 400 before the tool runs. Real HTTP server, raw requests.
 */
let runs = 0;
const routed = defineTaskTool({
  name: 'routed',
  description: 'Runs in a region a proxy routes on',
  inputSchema: z.object({
    region: z.string().meta({ 'x-mcp-header': 'Region' }),
    shards: z.number().int().optional().meta({ 'x-mcp-header': 'Shards' }),
  }),
  taskSupport: 'forbidden',
  handler: async ({ region }) => {
    runs++;
    return { content: [{ type: 'text', text: `ran in ${region}` }] };
  },
});

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ tools: [routed], preflights: {} });
});
afterAll(() => server.close());

const b64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;
const call = (args: Record<string, unknown>, headers: Record<string, string>) =>
  rpc(server.url, 'tools/call', { name: 'routed', arguments: args }, { headers });

describe('Mcp-Param-* headers of a task tool (SEP-2243)', () => {
  it('tools/list shows the x-mcp-header annotation', async () => {
    const list = await rpc(server.url, 'tools/list');
    expect(list.result.tools[0].inputSchema.properties.region).toMatchObject({
      type: 'string',
      'x-mcp-header': 'Region',
    });
  });

  it('a matching header, literal or Base64, and a number compared as a number are accepted', async () => {
    expect((await call({ region: 'eu-west' }, { 'mcp-param-region': 'eu-west' })).result.content[0].text).toBe(
      'ran in eu-west',
    );
    expect((await call({ region: 'zürich' }, { 'mcp-param-region': b64('zürich') })).status).toBe(200);
    const shards = await call({ region: 'x', shards: 4 }, { 'mcp-param-region': 'x', 'mcp-param-shards': '4.0' });
    expect(shards.result.content[0].text).toBe('ran in x');
  });

  it('a missing, different or non-canonical Base64 header is -32020, HTTP 400, and the tool does not run', async () => {
    const before = runs;
    const cases: Record<string, string>[] = [
      {},
      { 'mcp-param-region': 'us-east' },
      { 'mcp-param-region': '=?base64?ZXUtd2VzdA?=' }, // eu-west without its padding
      { 'mcp-param-region': '=?base64?ZXUt!!d2VzdA==?=' },
    ];
    for (const headers of cases) {
      const answer = await call({ region: 'eu-west' }, headers);
      expect(answer.status).toBe(400);
      expect(answer.error).toMatchObject({ code: -32020, data: { mismatch: { header: 'Mcp-Param-Region' } } });
    }
    expect(runs).toBe(before);
  });

  it('our executor sends the headers a -32020 refusal asks for (non-ASCII as Base64), and the tool runs once', async () => {
    const wire = await connectServer({ url: server.url }, { clock: systemClock, wire: 'mcp-tasks-ext' });
    try {
      const before = runs;
      const answer = await wire.submit({ tool: 'routed', args: { region: 'zürich', shards: 2 }, submissionKey: 'k-1' });
      expect(answer).toMatchObject({ kind: 'immediate' });
      expect(JSON.stringify(answer)).toContain('ran in zürich');
      expect(runs - before).toBe(1);
    } finally {
      await wire.close();
    }
  });
});
