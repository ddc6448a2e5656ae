import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * A package user serves every wire from the package's entries. The script runs in a child Node
 * process that imports the built package by its name (the exports map applies, as for an installed
 * dependency), so it needs `npm run build` first, like the CLI tests. Each audience has its entry:
 * the root for server authors, `/wires` for the wire adapters and their registry, `/client` for
 * the executor, `/telemetry`, `/bridge`, `/sqlite`, `/postgres` and `/testing`.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

const SCRIPT = `
import * as terminus from 'mcp-terminus';
import * as wires from 'mcp-terminus/wires';
const entries = {
  '.': terminus,
  wires,
  client: await import('mcp-terminus/client'),
  telemetry: await import('mcp-terminus/telemetry'),
  bridge: await import('mcp-terminus/bridge'),
  sqlite: await import('mcp-terminus/sqlite'),
  postgres: await import('mcp-terminus/postgres'),
  testing: await import('mcp-terminus/testing'),
};
const { createTerminusServer, createEngine, createMemoryTaskStore, systemClock, systemIds } = terminus;
const { createWireRegistry } = wires;
const expected = {
  '.': ['createTerminus', 'createTerminusServer', 'createEngine', 'createMemoryTaskStore', 'defineTaskTool', 'createBearerAuth', 'createJwtAuth', 'TerminusError', 'route', 'stderrLogger'],
  wires: ['tasksExtensionWire', 'createRev20251125Wire', 'sep1391Wire', 'aip151Wire', 'createWireRegistry', 'parseWireName'],
  client: ['createExecutor', 'createMemoryLedger', 'connectServer', 'createRev20251125Wire', 'validateOutputSchemas', 'typedResult'],
  telemetry: ['createMetrics', 'lifecycleLog', 'taskTracing', 'readinessProbe', 'operationsRoutes'],
  bridge: ['createBridge', 'DEFAULT_INLINE_WAIT_MS'],
  sqlite: ['openSqliteTaskStore', 'openSqliteLedger'],
  postgres: ['openPostgresTaskStore', 'openPostgresLedger', 'createPostgresEvents'],
  testing: ['describeTaskStore', 'describeLedger'],
};
const missing = Object.entries(expected).flatMap(([entry, names]) =>
  names.filter((n) => entries[entry][n] === undefined).map((n) => entry + ':' + n));
// Moved out of the root to their audience's entry, and the demo tools are no entry's.
const notInRoot = ['createWireRegistry', 'tasksExtensionWire', 'createExecutor', 'createBridge', 'createMetrics', 'demoTools']
  .filter((n) => n in terminus);
const demo = Object.entries(entries).filter(([, m]) => 'demoTools' in m).map(([e]) => e);
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
  notInRoot,
  demo,
  wires: registry.registrations.map((r) => [r.wire, r.enabled]),
  aipStatus: listed.status,
  aipBody: await listed.json(),
  deep,
  server: wires.createRev20251125Wire().name,
}));
`;

describe('the package entries', () => {
  it('import from the built package by name, and serve AIP-151 with the wires entry', async () => {
    expect(existsSync(join(ROOT, 'dist', 'index.js')), 'run npm run build first').toBe(true);
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: ROOT,
      timeout: 30_000,
    });
    const out = JSON.parse(stdout.trim()) as Record<string, unknown>;
    expect(out.missing).toEqual([]);
    expect(out.notInRoot).toEqual([]);
    expect(out.demo).toEqual([]);
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
