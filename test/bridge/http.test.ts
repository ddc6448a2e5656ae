/**
 * `terminus bridge --port 0` (Streamable HTTP on 127.0.0.1): MCP Inspector's CLI
 * (`@modelcontextprotocol/inspector-cli`) lists and calls the bridge's tools, a handle comes back
 * and `terminus_wait` returns the result; operations belong to the caller's Authorization header,
 * so another caller gets the unknown-id error for the same id; an SDK 2.4 client on the 2026-07-28
 * era is served too.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, ROOT, start, startServe, tempDir, type Served } from '../cli/helpers.js';
import { startHttpBridge } from './helpers.js';

const SLOW = 180_000;
const INSPECTOR = join(ROOT, 'node_modules/.bin/mcp-inspector-cli');
const dir = tempDir('terminus-bridge-http-');
let served: Served;
let url: string;

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
  url = await startHttpBridge(dir.path, [
    '--upstream',
    `reports=${served.url}`,
    '--ledger',
    join(dir.path, 'b.db'),
    '--inline-wait',
    '2',
  ]);
}, SLOW);
afterAll(async () => {
  await served?.stop();
  killAll();
  dir.remove();
});

interface ToolAnswer {
  readonly content: { type: string; text: string }[];
  readonly isError?: boolean;
  readonly structuredContent?: { operation?: { id: string; outcome?: string } };
}

/**
 * One Inspector CLI run. It reads its own package.json through a path relative to the working
 * folder (inspector-cli 1.0.3), so it runs from a folder whose parent holds a package.json.
 */
async function inspector(...args: string[]): Promise<unknown> {
  const ran = await start([INSPECTOR, '--cli', url, ...args], { cwd: join(ROOT, 'test'), input: '' }).done;
  if (ran.code !== 0) throw new Error(`inspector exited ${ran.code}: ${ran.stderr}`);
  return JSON.parse(ran.stdout) as unknown;
}

const call = (tool: string, ...args: string[]) =>
  inspector('--method', 'tools/call', '--tool-name', tool, ...args) as Promise<ToolAnswer>;

describe('terminus bridge over Streamable HTTP', () => {
  it(
    "MCP Inspector's CLI lists and calls the bridge's tools",
    async () => {
      const listed = (await inspector('--method', 'tools/list')) as { tools: { name: string }[] };
      expect(listed.tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['slow_compute', 'confirm_delete', 'terminus_wait', 'terminus_operations']),
      );

      const first = await call('slow_compute', '--tool-arg', 'seconds=5', 'label=inspector');
      const id = first.structuredContent!.operation!.id;
      expect(first.content[0]!.text).toContain(`terminus_wait {"operation":"${id}"}`);
      let result: ToolAnswer | undefined;
      for (let i = 0; i < 30 && result === undefined; i++) {
        const waited = await call('terminus_wait', '--tool-arg', `operation=${id}`);
        if (waited.structuredContent?.operation === undefined) result = waited;
      }
      expect(result?.content[0]!.text).toBe('inspector: done after 5 s');

      // Another caller (another Authorization header) cannot see it, by id or in the list.
      const foreign = await call(
        'terminus_status',
        '--tool-arg',
        `operation=${id}`,
        '--header',
        'Authorization: Bearer other',
      );
      expect(foreign.isError).toBe(true);
      expect(foreign.content[0]!.text).toMatch(/unknown or not yours/);
      const theirs = await call('terminus_operations', '--header', 'Authorization: Bearer other');
      expect(JSON.stringify(theirs)).not.toContain(id);
      const mine = await call('terminus_operations');
      expect(JSON.stringify(mine)).toContain(id);
    },
    SLOW,
  );

  it('an SDK 2.4 client on the 2026-07-28 era lists and calls through the bridge', async () => {
    const client = new Client(
      { name: 'modern-host', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('terminus_wait');
      const quick = await client.callTool(
        { name: 'slow_compute', arguments: { seconds: 0, label: 'modern' } },
        { timeout: 5_000 },
      );
      expect(quick.content).toEqual([{ type: 'text', text: 'modern: done after 0 s' }]);
    } finally {
      await client.close();
    }
  });

  it(
    'a 2026-07-28-era host with elicitation is asked through an input_required result, bound to the round',
    async () => {
      const asked: string[] = [];
      const client = new Client(
        { name: 'modern-elicit-host', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      client.setRequestHandler('elicitation/create', (request) => {
        asked.push(String((request.params as { message?: string }).message));
        return { action: 'accept', content: { confirm: true } } as never;
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        let result = await client.callTool(
          { name: 'confirm_delete', arguments: { filename: 'modern.txt' } },
          { timeout: 5_000 },
        );
        for (let i = 0; i < 30; i++) {
          const op = (result.structuredContent as { operation?: { id: string } } | undefined)?.operation;
          if (op === undefined) break;
          result = await client.callTool(
            { name: 'terminus_wait', arguments: { operation: op.id } },
            { timeout: 5_000 },
          );
        }
        expect(result.content).toEqual([{ type: 'text', text: 'Deleted modern.txt' }]);
        expect(asked).toEqual(['Delete modern.txt?']);
      } finally {
        await client.close();
      }
    },
    SLOW,
  );

  it('refuses a request whose Host or Origin is not loopback (DNS rebinding)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const evil = await fetch(url, { method: 'POST', body, headers: { ...headers, origin: 'http://evil.example' } });
    expect(evil.status).toBe(403);
    const rebound = await fetch(url.replace('127.0.0.1', 'localhost'), { method: 'POST', body, headers });
    expect(rebound.status).not.toBe(403);
  });
});
