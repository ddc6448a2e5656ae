import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Issue 12 "Also": a package user serves every wire from `mcp-terminus` itself. The script runs in
 * a child Node process that imports the built package by its name (the exports map applies, as for
 * an installed dependency), so it needs `npm run build` first, like the CLI tests.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

const SCRIPT = `
import * as terminus from 'mcp-terminus';
const { createWireRegistry, createTerminusServer, createEngine, createMemoryTaskStore, defineTaskTool, systemClock, systemIds } = terminus;
const names = ['tasksExtensionWire', 'createRev20251125ServerWire', 'sep1391Wire', 'aip151Wire', 'createWireRegistry', 'createBearerAuth', 'createJwtAuth'];
const missing = names.filter((n) => terminus[n] === undefined);
const registry = createWireRegistry({ disabled: ['sep-1391'] });
const store = createMemoryTaskStore();
const engine = createEngine({ store, tools: [], clock: systemClock, ids: systemIds });
const server = createTerminusServer({ engine: registry.guard(engine), wires: registry.adapters });
const http = await server.serveHttp({ port: 0 });
const listed = await fetch(http.url.replace(/\\/mcp$/, '/v1/operations'));
let deep = 'exported';
try { await import('mcp-terminus/dist/server/wire/registry.js'); } catch (e) { deep = e.code; }
await http.close();
await store.close();
console.log(JSON.stringify({
  missing,
  wires: registry.registrations.map((r) => [r.wire, r.enabled]),
  aipStatus: listed.status,
  aipBody: await listed.json(),
  deep,
  server: terminus.createRev20251125ServerWire().name,
}));
`;

describe('the package exports every server wire and the registry', () => {
  it('imports from the built package by name, and serves AIP-151 with them', async () => {
    expect(existsSync(join(ROOT, 'dist', 'index.js')), 'run npm run build first').toBe(true);
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: ROOT,
      timeout: 30_000,
    });
    const out = JSON.parse(stdout.trim()) as Record<string, unknown>;
    expect(out.missing).toEqual([]);
    expect(out.wires).toEqual([
      ['mcp-tasks-ext', true],
      ['mcp-2025-11-25', true],
      ['sep-1391', false],
      ['aip-151', true],
    ]);
    expect(out.server).toBe('mcp-2025-11-25');
    expect(out.aipStatus).toBe(200);
    expect(out.aipBody).toEqual({ operations: [], nextPageToken: '' });
    // The deep import the issue hit stays closed: the curated entry is the way in (STYLE.md, Surface).
    expect(out.deep).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });
});
