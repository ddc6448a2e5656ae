/**
 * Load that does not starve the server (issue 31 item 2). On a 2-core machine the 16 load clients
 * of the request figures run in the harness's own process and used to share both cores with the
 * server under test, so a ratio against B0 or the floor measured the clients as much as the
 * servers. With `taskset` (util-linux) and at least 2 cores, the figures that drive a server with
 * a load (1 and 5, 8, and figure 12's HTTP row) run their server processes on the first half of
 * the cores and the harness (the load generator) on the other half; PostgreSQL stays unpinned.
 * Without `taskset`, or on one core, nothing is pinned and the report says so.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface Pinning {
  /** CPU list (`taskset -c`) of the servers under test; undefined when nothing is pinned. */
  readonly serverCpus: string | undefined;
  /** CPU list of the load generator (the harness, or figure 12's client process). */
  readonly loadCpus: string | undefined;
  /** What the report prints: how the load was placed, or why it was not. */
  readonly description: string;
}

function tasksetWorks(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function detectPinning(): Pinning {
  const cores = availableParallelism();
  if (cores < 2) {
    return {
      serverCpus: undefined,
      loadCpus: undefined,
      description: 'not pinned (1 core): clients share it with the server',
    };
  }
  if (!tasksetWorks()) {
    return {
      serverCpus: undefined,
      loadCpus: undefined,
      description: 'not pinned (no taskset: install util-linux): clients share the cores with the server',
    };
  }
  const half = Math.floor(cores / 2);
  const range = (from: number, to: number): string => (from === to ? String(from) : `${from}-${to}`);
  const serverCpus = range(0, half - 1);
  const loadCpus = range(half, cores - 1);
  return {
    serverCpus,
    loadCpus,
    description: `taskset: servers under load on CPU ${serverCpus}, the load generator on CPU ${loadCpus} (figures 1, 5, 8 and 12's HTTP row); PostgreSQL unpinned`,
  };
}

/** The command that runs `args` on `cpus` (`taskset -c`), or `args` as they are. */
export function onCpus(cpus: string | undefined, command: string, args: readonly string[]): [string, string[]] {
  return cpus === undefined ? [command, [...args]] : ['taskset', ['-c', cpus, command, ...args]];
}

let serverCpus: string | undefined;

/** Where `startServer` puts the servers it starts now (set only inside `withPinnedLoad`). */
export function currentServerCpus(): string | undefined {
  return serverCpus;
}

/**
 * Runs `work` with this process (and every thread of it) on the load CPUs and the servers it
 * starts on the server CPUs; both are undone afterwards. Without pinning, just runs `work`.
 */
export async function withPinnedLoad<T>(pinning: Pinning, work: () => Promise<T>): Promise<T> {
  if (pinning.serverCpus === undefined || pinning.loadCpus === undefined) return work();
  const all = `0-${availableParallelism() - 1}`;
  execFileSync('taskset', ['-a', '-p', '-c', pinning.loadCpus, String(process.pid)], { stdio: 'ignore' });
  serverCpus = pinning.serverCpus;
  try {
    return await work();
  } finally {
    serverCpus = undefined;
    execFileSync('taskset', ['-a', '-p', '-c', all, String(process.pid)], { stdio: 'ignore' });
  }
}
