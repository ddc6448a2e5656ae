/**
 * Child processes for the CLI and interop tests: `terminus serve` on 127.0.0.1 port 0, `terminus`
 * commands, and fixture scripts, all run from the TypeScript sources through tsx. Every child is
 * tracked and killed by `killAll()` (call it in afterEach/afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
export const MAIN = join(ROOT, 'src/cli/main.ts');
export const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** argv for `node` running a TypeScript file. */
export const tsNode = (file: string, ...args: string[]): string[] => ['--import', TSX, file, ...args];

/** The `--stdio` command line that runs a TypeScript file (paths without spaces: quoted anyway). */
export const stdioCommand = (file: string, ...args: string[]): string =>
  [process.execPath, ...tsNode(file, ...args)].map((w) => `'${w}'`).join(' ');

const children = new Set<ChildProcess>();

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

export function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

export function tempDir(prefix: string): { readonly path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Served {
  readonly url: string;
  readonly child: ChildProcess;
  readonly db: string;
  stop(): Promise<void>;
}

/**
 * `terminus serve` on 127.0.0.1:0 with its own SQLite file; resolves with the URL it prints. The
 * source CLI under tsx, or with `built` the CLI a user runs (`dist/`, `npm run build` first); `env`
 * replaces the environment (the variables a test sets or clears).
 */
export async function startServe(
  dir: string,
  extra: readonly string[] = [],
  options: { readonly built?: boolean; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<Served> {
  const db = join(dir, 'server.db');
  const args = ['serve', '--host', '127.0.0.1', '--port', '0', '--db', db, ...extra];
  const child = track(
    spawn(process.execPath, options.built === true ? [BUILT, ...args] : tsNode(MAIN, ...args), {
      cwd: dir,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolveUrl(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`terminus serve exited ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    db,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Running {
  readonly child: ChildProcess;
  /** Resolves once `pattern` appears in stdout or stderr. */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr'): Promise<string>;
  readonly done: Promise<Ran>;
}

/** Starts `node <args>`; stdin gets `input` (then EOF) when given, else stays open. */
export function start(
  args: readonly string[],
  options: { cwd: string; input?: string; env?: NodeJS.ProcessEnv },
): Running {
  const child = track(
    spawn(process.execPath, [...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const text = { stdout: '', stderr: '' };
  const watchers: { pattern: RegExp; stream: 'stdout' | 'stderr' | 'any'; resolve(m: string): void }[] = [];
  const check = (): void => {
    for (const w of [...watchers]) {
      const hay = w.stream === 'any' ? text.stdout + text.stderr : text[w.stream];
      const match = w.pattern.exec(hay);
      if (match) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve(match[0]);
      }
    }
  };
  child.stdout!.on('data', (d: Buffer) => {
    text.stdout += d.toString();
    check();
  });
  child.stderr!.on('data', (d: Buffer) => {
    text.stderr += d.toString();
    check();
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  const done = new Promise<Ran>((resolveRun) =>
    child.on('close', (code, signal) => resolveRun({ code, signal, stdout: text.stdout, stderr: text.stderr })),
  );
  return {
    child,
    done,
    waitFor: (pattern, stream) =>
      new Promise<string>((resolveMatch, reject) => {
        watchers.push({ pattern, stream: stream ?? 'any', resolve: resolveMatch });
        check();
        void done.then((ran) => reject(new Error(`exited (${ran.code}) before ${pattern}: ${ran.stderr}`)));
      }),
  };
}

/** `terminus ARGS...` to completion. */
export function terminus(args: readonly string[], options: { cwd: string; input?: string }): Promise<Ran> {
  return start(tsNode(MAIN, ...args), { ...options, input: options.input ?? '' }).done;
}

/** Parses the single JSON object `--json` prints; fails when stdout holds anything else. */
export function onlyJson(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected exactly one JSON line on stdout, got ${lines.length}: ${stdout}`);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

/**
 * The built CLI (`npm run build`): what a user runs, and a second faster to start than tsx on a
 * loaded machine. `assertBuilt()` fails (never skips) when dist/ is older than src/cli or is missing.
 */
export const BUILT = process.env.TERMINUS_TEST_CLI ?? join(ROOT, 'dist/cli/main.js');

export function assertBuilt(): void {
  // TERMINUS_TEST_CLI: another build (an older commit's dist/, to see these tests fail on it).
  if (process.env.TERMINUS_TEST_CLI !== undefined) return;
  const src = join(ROOT, 'src/cli');
  for (const name of readdirSync(src).filter((n) => n.endsWith('.ts'))) {
    const out = join(ROOT, 'dist/cli', name.replace(/\.ts$/, '.js'));
    if (!existsSync(out) || statSync(out).mtimeMs < statSync(join(src, name)).mtimeMs) {
      throw new Error(
        `dist/cli/${name.replace(/\.ts$/, '.js')} is missing or older than its source: run \`npm run build\``,
      );
    }
  }
}

/** `terminus ARGS...` with the built CLI, to completion. */
export function built(
  args: readonly string[],
  options: { cwd: string; input?: string; env?: NodeJS.ProcessEnv },
): Promise<Ran> {
  return start([BUILT, ...args], { ...options, input: options.input ?? '' }).done;
}
