/**
 * Re-running `terminus call` (issue 11 defect 4, C5): the call node is derived from the server, the
 * tool and the canonical arguments, so the same command re-attaches while its operation is in
 * flight and starts a new one after a receipt; `--new` forces one. Also `--json` mirroring the
 * receipt (defect 8), `--header` / `--token` / `TERMINUS_TOKEN`, and `terminus tools`.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BUILT, built, killAll, onlyJson, start, startServe, tempDir, type Served } from './helpers.js';

const dir = tempDir('terminus-rerun-');
let served: Served;
let n = 0;
const SLOW = 180_000;
const ledger = (): string => join(dir.path, `ledger-${(n += 1)}`, 'ledger.db');

beforeAll(async () => {
  assertBuilt();
  served = await startServe(dir.path);
}, SLOW);
afterAll(async () => {
  await served.stop();
  killAll();
  dir.remove();
});

interface Op {
  readonly id: string;
  readonly callNodeId: string;
  readonly state: string;
}
const operations = async (file: string): Promise<Op[]> =>
  onlyJson((await built(['ops', 'list', '--all', '--json', '--ledger', file], { cwd: dir.path })).stdout)
    .operations as Op[];

describe('terminus call: the same command twice', () => {
  it(
    're-attaches while in flight (same operation, says so), starts a new one after the receipt, and --new forces one',
    async () => {
      const file = ledger();
      const args = (order: 'a' | 'b') =>
        order === 'a'
          ? '{"title":"rerun","sections":6,"sectionSeconds":0.5}'
          : '{"sectionSeconds":0.5,"sections":6,"title":"rerun"}';
      const call = (order: 'a' | 'b', ...extra: string[]) => [
        'call',
        '--url',
        served.url,
        'build_report',
        '--args',
        args(order),
        '--ledger',
        file,
        '--json',
        ...extra,
      ];

      const first = start([BUILT, ...call('a')], { cwd: dir.path });
      await first.waitFor(/WORKING \(server: working\)/, 'stderr');
      first.child.kill('SIGINT');
      const detached = onlyJson((await first.done).stdout);
      expect(detached).toMatchObject({ status: 'detached', attached: false });
      const opId = (detached.operation as Op).id;

      // Same server, tool and arguments (keys in another order): the same operation, never a second.
      const again = await built(call('b'), { cwd: dir.path });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(new RegExp(`re-attaching to operation ${opId} \\(started .* ago, WORKING\\)`));
      expect(onlyJson(again.stdout)).toMatchObject({ status: 'completed', attached: true, operation: { id: opId } });
      expect(await operations(file)).toHaveLength(1);

      // After the receipt: a new operation, and it says so.
      const third = await built(call('a'), { cwd: dir.path });
      expect(third.code, third.stderr).toBe(0);
      expect(third.stderr).toMatch(new RegExp(`the last run of this command ended \\(operation ${opId}, ACCEPTED`));
      const thirdOut = onlyJson(third.stdout);
      expect(thirdOut).toMatchObject({ status: 'completed', attached: false });
      expect((thirdOut.operation as Op).id).not.toBe(opId);

      // --new while one is in flight: a second operation beside it.
      const fourth = start([BUILT, ...call('a')], { cwd: dir.path });
      await fourth.waitFor(/WORKING \(server: working\)/, 'stderr');
      fourth.child.kill('SIGINT');
      const fourthId = ((onlyJson((await fourth.done).stdout).operation as Op) ?? { id: '' }).id;
      const fresh = await built(call('a', '--new'), { cwd: dir.path });
      expect(fresh.stderr).toMatch(new RegExp(`--new: starting a new operation beside ${fourthId}`));
      const freshOut = onlyJson(fresh.stdout);
      expect(freshOut).toMatchObject({ status: 'completed', attached: false });
      expect((freshOut.operation as Op).id).not.toBe(fourthId);
      const all = await operations(file);
      expect(all).toHaveLength(4);
      expect(new Set(all.map((o) => o.callNodeId)).size).toBe(4);
    },
    SLOW,
  );

  it(
    '--call-node keeps its meaning; the same call node with other arguments names what conflicts with what',
    async () => {
      const file = ledger();
      const base = ['call', '--url', served.url, 'build_report', '--ledger', file, '--json', '--call-node', 'nightly'];
      const one = await built([...base, '--args', '{"sections":1,"sectionSeconds":0.05}'], { cwd: dir.path });
      expect(one.code, one.stderr).toBe(0);
      const opId = (onlyJson(one.stdout).operation as Op).id;
      const same = await built([...base, '--args', '{"sections":1,"sectionSeconds":0.05}'], { cwd: dir.path });
      expect(onlyJson(same.stdout)).toMatchObject({ status: 'completed', attached: true, operation: { id: opId } });
      const other = await built([...base, '--args', '{"sections":2,"sectionSeconds":0.05}'], { cwd: dir.path });
      expect(other.code).toBe(1);
      expect(onlyJson(other.stdout).message).toMatch(
        new RegExp(
          `call node nightly already belongs to operation ${opId} \\(build_report, other arguments, ACCEPTED\\)`,
        ),
      );
      expect(other.stderr).not.toMatch(/\n\s+at /);
      const both = await built([...base, '--new'], { cwd: dir.path });
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/--new and --call-node exclude each other/);
    },
    SLOW,
  );
});

describe('terminus call --json mirrors the receipt (defect 8)', () => {
  it(
    'a tool error is status completed with isError true (exit 1), never failed',
    async () => {
      // A folder where the CSV should be: the handler's read throws, which is a tool error,
      // while a missing file is a ToolRpcError (failed) since the demo tools check their paths.
      mkdirSync(join(dir.path, 'data', 'folder.csv'), { recursive: true });
      const ran = await built(
        ['call', '--url', served.url, 'analyze_csv', '--args', '{"path":"folder.csv"}', '--ledger', ledger(), '--json'],
        { cwd: dir.path },
      );
      expect(ran.code).toBe(1);
      const out = onlyJson(ran.stdout);
      expect(out).toMatchObject({ status: 'completed', isError: true, exitCode: 1, receipt: { status: 'completed' } });
      expect(out.result).toMatchObject({ isError: true });
      const human = await built(
        ['call', '--url', served.url, 'analyze_csv', '--args', '{"path":"folder.csv"}', '--ledger', ledger()],
        { cwd: dir.path },
      );
      expect(human.stderr).toMatch(/completed with a tool error \(isError\): receipt rcpt_/);
    },
    SLOW,
  );
});

describe('--header, --token, TERMINUS_TOKEN and terminus tools', () => {
  it(
    'every request of tools and call carries the headers; tools lists task support and arguments',
    async () => {
      const seen: IncomingHttpHeaders[] = [];
      const proxy = createServer((req, res) => {
        seen.push(req.headers);
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(req.headers)) {
            if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
          }
          const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
          const target = new URL(req.url ?? '/', served.url).toString();
          // Buffered: a listen stream the executor opens through here ends as "terminated" when
          // its client goes, which must end this exchange, never reject unhandled.
          fetch(target, { method: req.method ?? 'GET', headers, ...(body === undefined ? {} : { body }) })
            .then(
              async (answer) => {
                const out: Record<string, string> = {};
                answer.headers.forEach((v, k) => {
                  if (k !== 'content-length' && k !== 'transfer-encoding') out[k] = v;
                });
                const bytes = Buffer.from(await answer.arrayBuffer());
                res.writeHead(answer.status, out);
                res.end(bytes);
              },
              () => res.writeHead(502).end(),
            )
            .catch(() => res.destroy());
        });
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
      try {
        const tools = await built(['tools', '--url', url, '--token', 'tok-1', '--header', 'X-Trace: 7'], {
          cwd: dir.path,
        });
        expect(tools.code, tools.stderr).toBe(0);
        const firstRun = seen.length;
        expect(firstRun).toBeGreaterThan(1);
        expect(seen.every((h) => h['x-trace'] === '7')).toBe(true);
        expect(tools.stdout).toMatch(/task tool calls advertised; 4 tools/);
        expect(tools.stdout).toMatch(/build_report {2}\[task: optional\]/);
        expect(tools.stdout).toMatch(/migrate {2}\[task: required\]/);
        expect(tools.stdout).toMatch(/arguments: title: string = "Quarterly report", sections: integer = 12/);
        const listed = onlyJson(
          (await built(['tools', '--url', url, '--json', '--token', 'tok-1'], { cwd: dir.path })).stdout,
        );
        expect(listed.tools as { name: string; execution?: unknown }[]).toContainEqual(
          expect.objectContaining({ name: 'build_report', execution: { taskSupport: 'optional' } }),
        );
        expect(seen.length).toBeGreaterThan(firstRun);
        expect(seen.every((h) => h.authorization === 'Bearer tok-1')).toBe(true);

        seen.length = 0;
        const file = ledger();
        const call = await built(
          [
            'call',
            '--url',
            url,
            'build_report',
            '--args',
            '{"sections":1,"sectionSeconds":0.05}',
            '--ledger',
            file,
            '--header',
            'X-Trace: 8',
          ],
          { cwd: dir.path, env: { TERMINUS_TOKEN: 'tok-env' } },
        );
        expect(call.code, call.stderr).toBe(0);
        expect(seen.length).toBeGreaterThan(1);
        expect(seen.every((h) => h.authorization === 'Bearer tok-env' && h['x-trace'] === '8')).toBe(true);
        const bad = await built(['tools', '--url', url, '--header', 'no colon'], { cwd: dir.path });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toMatch(/expected NAME:VALUE/);
      } finally {
        await new Promise((r) => proxy.close(r));
      }
    },
    SLOW,
  );
});
