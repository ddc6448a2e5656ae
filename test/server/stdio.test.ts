import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EXT, PROTOCOL } from './helpers.js';

/**
 * `terminus serve --stdio` as a child process with the SDK's own stdio client: stdout carries only
 * protocol messages, the demo tools run, and task methods are served with the owner `stdio`.
 */
const root = new URL('../..', import.meta.url).pathname;
let dir: string;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-stdio-'));
  // Connection-level capabilities without the extension: inline runs; task methods are gated.
  client = new Client(
    { name: 'stdio-test', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: PROTOCOL } } },
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--stdio', '--db', join(dir, 'stdio.db')],
      cwd: root,
      stderr: 'ignore',
    }),
  );
});
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('terminus serve --stdio', () => {
  it('advertises the extension and lists the demo tools', async () => {
    expect(client.getServerCapabilities()?.extensions).toEqual({ [EXT]: {} });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['analyze_csv', 'build_report', 'migrate', 'run_tests']);
  });

  it('X-66 runs analyze_csv inline for a client without the extension', async () => {
    const result = await client.callTool({ name: 'analyze_csv', arguments: { sampleRows: 1000 } });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { rows: number }).rows).toBe(1000);
  });

  it('X-04 a required-task tool is -32021 for a client without the extension', async () => {
    await expect(client.callTool({ name: 'migrate', arguments: {} })).rejects.toMatchObject({ code: -32021 });
  });

  it('X-47 task methods are gated on stdio too', async () => {
    const schema = z.looseObject({});
    await expect(client.request({ method: 'tasks/get', params: { taskId: 'x' } }, schema)).rejects.toMatchObject({
      code: -32021,
    });
  });
});
