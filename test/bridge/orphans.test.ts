/**
 * A bridge's stdio upstreams end with it. The real built bridge starts the real server-everything
 * through `npx` (a chain: npm exec, sh, node) and a host starts a 300 s call (the server does not
 * exit while it runs, its stdin closed or not). Then the bridge is killed with SIGKILL, closed as
 * SDK hosts close a server, or sent SIGTERM after a restart on the same ledger: every process of
 * the chain must be gone (read from /proc) long before the call would have ended.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BUILT, ROOT, tempDir } from '../cli/helpers.js';
import { ledgerIn } from './helpers.js';

const SLOW = 120_000;
const dir = tempDir('terminus-bridge-orphans-');
const ledger = ledgerIn(dir.path, 'orphans');
/** Every process a bridge of this file started, to end them whatever the test found. */
const seen = new Set<number>();

beforeAll(() => assertBuilt());
afterAll(() => {
  for (const pid of seen) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  dir.remove();
});

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly cmdline: string;
}

function processes(): Proc[] {
  const all: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      all.push({ pid: Number(name), ppid, cmdline });
    } catch {
      // ended while we read
    }
  }
  return all;
}

/** The live descendants of `root` (not `root` itself). */
function descendants(root: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = all.filter((p) => frontier.includes(p.ppid));
    found.push(...next);
    frontier = next.map((p) => p.pid);
  }
  return found;
}

const alive = (pids: readonly number[]): number[] => {
  const live = new Set(processes().map((p) => p.pid));
  return pids.filter((pid) => live.has(pid));
};

/** Polls until none of `pids` runs (bounded: the guard's grace is 2 s, the bound 15 times that). */
async function gone(pids: readonly number[]): Promise<number[]> {
  for (let i = 0; i < 300 && alive(pids).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  return alive(pids);
}

interface Host {
  readonly client: Client;
  readonly pid: number;
}

/** A host launching the built bridge with server-everything behind it, through npx. */
async function launch(): Promise<Host> {
  const client = new Client({ name: 'orphans-host', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BUILT,
      'bridge',
      '--upstream',
      'everything=stdio:npx -y @modelcontextprotocol/server-everything stdio',
      '--ledger',
      ledger,
      '--inline-wait',
      '2',
    ],
    cwd: ROOT,
    stderr: 'ignore',
  });
  await client.connect(transport, { timeout: 60_000 });
  return { client, pid: transport.pid! };
}

/**
 * Starts the upstream chain through the bridge with a 300 s call in flight (the server does not end
 * while it runs, stdin closed or not) and returns the chain (server-everything among it).
 */
async function chainOf(host: Host): Promise<{ chain: Proc[]; call: Promise<unknown> }> {
  const names = (await host.client.listTools({}, { timeout: 60_000 })).tools.map((t) => t.name);
  expect(names).toContain('trigger-long-running-operation');
  const call = host.client
    .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 300, steps: 2 } }, { timeout: 5_000 })
    .catch(() => undefined);
  await new Promise((r) => setTimeout(r, 500));
  const chain = descendants(host.pid);
  for (const p of chain) seen.add(p.pid);
  seen.add(host.pid);
  expect(chain.some((p) => p.cmdline.includes('server-everything'))).toBe(true);
  return { chain, call };
}

/** What is left of the chain once the bridge is gone (bounded wait). */
async function leftOf(host: Host, chain: readonly Proc[]): Promise<(string | undefined)[]> {
  expect(await gone([host.pid])).toEqual([]);
  const left = await gone(chain.map((p) => p.pid));
  return left.map((pid) => chain.find((p) => p.pid === pid)?.cmdline);
}

describe('a bridge whose stdio upstreams run through npx, a call in flight', () => {
  it(
    'kill -9 of the bridge: every process of the upstream chain ends',
    async () => {
      const host = await launch();
      const { chain, call } = await chainOf(host);
      process.kill(host.pid, 'SIGKILL');
      expect(await leftOf(host, chain), 'processes left after kill -9').toEqual([]);
      await call;
      await host.client.close().catch(() => undefined);
    },
    SLOW,
  );

  it(
    'the host closes the bridge as SDK hosts do (stdin closed, SIGTERM 2 s later): every process ends',
    async () => {
      const host = await launch();
      const { chain, call } = await chainOf(host);
      await host.client.close();
      expect(await leftOf(host, chain), 'processes left after the host closed').toEqual([]);
      await call;
    },
    SLOW,
  );

  it(
    'a bridge restarted on the same ledger, sent SIGTERM: every process ends',
    async () => {
      const host = await launch();
      const { chain, call } = await chainOf(host);
      process.kill(host.pid, 'SIGTERM');
      expect(await leftOf(host, chain), 'processes left after SIGTERM').toEqual([]);
      await call;
      await host.client.close().catch(() => undefined);
    },
    SLOW,
  );
});
