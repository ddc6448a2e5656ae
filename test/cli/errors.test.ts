/**
 * Errors a person can act on (issue 11): one line on stderr naming the thing and what to do, no
 * stack trace, and nothing left behind: a port in use or a bad --host (no database file created),
 * a wrong endpoint path, a ledger or database that is read-only, not a database, damaged, or under
 * /proc.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestDigest } from '../../src/core/digest.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { newOperation } from '../../src/executor/operation.js';
import { assertBuilt, built, killAll, tempDir, type Ran } from './helpers.js';

const dir = tempDir('terminus-errors-');
const SLOW = 120_000;
beforeAll(() => assertBuilt());
afterAll(() => {
  killAll();
  dir.remove();
});

/** One line, no stack trace. */
function oneLine(ran: Ran, pattern: RegExp): void {
  const lines = ran.stderr.split('\n').filter((l) => l.trim() !== '' && !/^\[\d/.test(l));
  expect(lines.join('\n')).toMatch(pattern);
  expect(ran.stderr).not.toMatch(/\n\s+at /);
}

const listen = (server: Server | ReturnType<typeof createHttpServer>): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('terminus serve', () => {
  it(
    'a port in use and a bad --host are one line, exit 1, and no database file is created',
    async () => {
      const busy = createServer();
      const port = await listen(busy);
      try {
        const db = join(dir.path, 'serve-busy', 'terminus.db');
        const inUse = await built(['serve', '--port', String(port), '--db', db], { cwd: dir.path });
        expect(inUse.code).toBe(1);
        oneLine(
          inUse,
          new RegExp(
            `terminus serve: port ${port} on 127\\.0\\.0\\.1 is in use: stop the other server or pick another --port`,
          ),
        );
        expect(existsSync(join(dir.path, 'serve-busy'))).toBe(false);
      } finally {
        busy.close();
      }
      const db = join(dir.path, 'serve-host', 'terminus.db');
      const foreign = await built(['serve', '--host', '203.0.113.7', '--port', '0', '--db', db], { cwd: dir.path });
      expect(foreign.code).toBe(1);
      oneLine(
        foreign,
        /terminus serve: --host 203\.0\.113\.7 is not an address of this machine: use 127\.0\.0\.1, 0\.0\.0\.0/,
      );
      const unknown = await built(['serve', '--host', 'no-such-host.invalid', '--port', '0', '--db', db], {
        cwd: dir.path,
      });
      expect(unknown.code).toBe(1);
      oneLine(unknown, /terminus serve: --host no-such-host\.invalid does not resolve/);
      expect(existsSync(join(dir.path, 'serve-host'))).toBe(false);
    },
    SLOW,
  );

  it('a --db file that is not a database is named, with what to do', async () => {
    const db = join(dir.path, 'not-a-db.txt');
    writeFileSync(db, 'these are my notes, not a database\n'.repeat(200));
    const ran = await built(['serve', '--port', '0', '--db', db], { cwd: dir.path });
    expect(ran.code).toBe(1);
    oneLine(
      ran,
      new RegExp(`serve: database ${db.replaceAll('.', '\\.')}: not a SQLite database \\(.*\\).*: pass another path`),
    );
  });
});

describe('ledgers', () => {
  it(
    'a file that is not a database, a read-only ledger, and a path under /proc fail at once with the path',
    async () => {
      const notDb = join(dir.path, 'notes.db');
      writeFileSync(notDb, 'not sqlite\n'.repeat(500));
      const listed = await built(['ops', 'list', '--ledger', notDb], { cwd: dir.path });
      expect(listed.code).toBe(1);
      oneLine(
        listed,
        new RegExp(`ledger ${notDb.replaceAll('.', '\\.')}: not a SQLite database \\(.*\\).*: pass another path`),
      );

      const ro = join(dir.path, 'ro', 'ledger.db');
      mkdirSync(join(dir.path, 'ro'));
      await openSqliteLedger({ path: ro }).close();
      const root = process.getuid?.() === 0;
      // root ignores file modes: an immutable file is what is read-only for root (ext4, tmpfs: chattr).
      if (root) execFileSync('chattr', ['+i', ro]);
      else execFileSync('chmod', ['444', ro]);
      try {
        const ran = await built(['call', '--url', 'http://127.0.0.1:9/mcp', 'build_report', '--ledger', ro], {
          cwd: dir.path,
        });
        expect(ran.code).toBe(1);
        oneLine(
          ran,
          new RegExp(
            `ledger ${ro.replaceAll('.', '\\.')} read-only \\((EPERM|EACCES)[^)]*\\): make it writable or pass another path`,
          ),
        );
      } finally {
        if (root) execFileSync('chattr', ['-i', ro]);
      }

      // Node's recursive mkdir never returns under /proc: this must fail at once, not spin.
      const proc = await built(
        ['call', '--url', 'http://127.0.0.1:9/mcp', 'x', '--ledger', '/proc/terminus/ledger.db'],
        {
          cwd: dir.path,
        },
      );
      expect(proc.code).toBe(1);
      oneLine(proc, /ledger: cannot create the folder \/proc\/terminus \(E\w+[^)]*\); pass another path/);
      const env = await built(['ops', 'list'], {
        cwd: dir.path,
        env: { TERMINUS_LEDGER: '/proc/self/nope/ledger.db' },
      });
      expect(env.code).not.toBe(0);
      expect(env.stderr).not.toMatch(/\n\s+at /);
    },
    SLOW,
  );
});

describe('servers', () => {
  it(
    'a URL that answers 404 is "no MCP endpoint at URL: HTTP 404", for call and tools',
    async () => {
      const http = createHttpServer((_req, res) => {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      });
      const port = await listen(http);
      const url = `http://127.0.0.1:${port}/wrong`;
      try {
        const call = await built(['call', '--url', url, 'build_report', '--ledger', join(dir.path, 'l404', 'l.db')], {
          cwd: dir.path,
        });
        expect(call.code).toBe(1);
        expect(call.stderr).toMatch(
          new RegExp(`no MCP endpoint at ${url}: HTTP 404 \\(check the path; terminus serve answers on /mcp\\)`),
        );
        const tools = await built(['tools', '--url', url], { cwd: dir.path });
        expect(tools.code).toBe(1);
        oneLine(tools, new RegExp(`terminus tools: no MCP endpoint at ${url}: HTTP 404`));
      } finally {
        http.close();
      }
    },
    SLOW,
  );

  it(
    'a damaged ledger is refused with the advice to keep it: its operations are only there',
    async () => {
      const path = join(dir.path, 'damaged-ledger.db');
      const ledger = openSqliteLedger({ path });
      for (let n = 0; n < 100; n++) {
        await ledger.create(
          newOperation({
            id: `op-${n}`,
            callNodeId: `node-${n}`,
            requestDigest: requestDigest('report', { n }),
            tool: { name: 'report', descriptorVersion: 'v1' },
            body: { n, pad: 'x'.repeat(400) },
            wire: { name: 'mcp-2025-11-25', adapterVersion: '1' },
            submissionKey: `key-${n}`,
            executionEpoch: 0,
            now: Date.now(),
            budgetMs: 60_000,
          }),
        );
      }
      await ledger.close();
      const bytes = readFileSync(path);
      bytes.fill(0xff, bytes.readUInt16BE(16) * 3, bytes.readUInt16BE(16) * 3 + 64);
      writeFileSync(path, bytes);
      const advice = new RegExp(
        `^terminus (ops|call): ledger ${path.replaceAll('.', '\\.')}: quick_check failed: .*: keep the file: ` +
          `its operations are only there, and \`sqlite3 ${path.replaceAll('.', '\\.')} \\.dump\` prints the rows it can still read ` +
          '\\(docs/operations.md, "Damaged storage"\\); ' +
          'another path starts without them, and a call made again is then submitted again$',
      );
      const listed = await built(['ops', 'list', '--ledger', path], { cwd: dir.path });
      expect(listed.code).toBe(1);
      oneLine(listed, advice);
      const called = await built(['call', '--url', 'http://127.0.0.1:9/mcp', 'report', '--ledger', path], {
        cwd: dir.path,
      });
      expect(called.code).toBe(1);
      oneLine(called, advice);
      expect(readFileSync(path).equals(bytes)).toBe(true);
    },
    SLOW,
  );
});
