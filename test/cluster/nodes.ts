import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ClusterEffect } from '../../src/tools/cluster/index.js';
import { CLUSTER_EFFECTS_FILE } from '../../src/tools/cluster/index.js';

/**
 * Several `terminus serve` nodes of the built CLI (`dist/`, as users run it) as child processes on
 * 127.0.0.1, sharing one PostgreSQL schema and one working directory, so their `--fixtures cluster`
 * tools append to one effects file.
 */
export const root = new URL('../..', import.meta.url).pathname;
const MAIN = join(root, 'dist', 'cli', 'main.js');

/**
 * dist/ up to date: the tests run the CLI users run, not the sources through a loader. Rebuilds only
 * when a source is newer than the last build (the global setup already did it once): two test files
 * rebuilding at once in parallel workers could read a half-written dist/.
 */
export function build(): void {
  execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
}

export interface Node {
  readonly id: string;
  readonly url: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** The db as the node printed it in its listening line. */
  readonly dbLabel: string;
  stderr(): string;
}

/** Every child any test started; `killAll` in afterAll/afterEach. */
const children = new Set<ChildProcess>();

export function runCli(
  args: readonly string[],
  cwd: string,
): { child: ChildProcess; stdout: Buffer[]; stderr: Buffer[] } {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stderr?.on('data', (c: Buffer) => stderr.push(c));
  child.stdout?.on('data', (c: Buffer) => stdout.push(c));
  return { child, stdout, stderr };
}

/** Starts one node and resolves once it printed its listening line. */
export async function startNode(options: { id: string; db: string; schema: string; cwd: string }): Promise<Node> {
  const { child, stderr } = runCli(
    [
      'serve',
      '--port',
      '0',
      '--db',
      options.db,
      '--pg-schema',
      options.schema,
      '--node-id',
      options.id,
      '--fixtures',
      'cluster',
    ],
    options.cwd,
  );
  const text = (): string => Buffer.concat(stderr).toString();
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.id}: no listening line; stderr: ${text()}`)), 20_000);
    createInterface({ input: child.stdout! }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${options.id} exited ${code}: ${text()}`));
    });
  });
  const match = /^terminus listening on (http:\/\/127\.0\.0\.1:\d+\/mcp) \(db (.+)\)$/.exec(line);
  if (match === null) throw new Error(`${options.id}: unexpected first line: ${line}`);
  return { id: options.id, url: match[1]!, dbLabel: match[2]!, child, pid: child.pid!, stderr: text };
}

/** `kill -9`, resolved once the process is gone. */
export async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export async function killAll(): Promise<void> {
  await Promise.all([...children].map((c) => kill9(c)));
}

/** Waits for a child to exit; resolves its exit code. */
export function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** The effects the cluster fixture tools recorded in `cwd` so far. */
export function readEffects(cwd: string): ClusterEffect[] {
  let text: string;
  try {
    text = readFileSync(join(cwd, '.terminus', 'data', CLUSTER_EFFECTS_FILE), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ClusterEffect);
}

/** Polls `probe` every `everyMs` until it returns a value other than undefined, or throws after `budgetMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  budgetMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const until = Date.now() + budgetMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${budgetMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>) {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
