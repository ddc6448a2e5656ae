import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The commands the docs give are run as written. Every fenced block whose opening fence line is
 * exactly "```sh run" in README.md and docs/**\/*.md (not docs/api/, the generated reference, nor
 * docs/gate-runs/) runs with `bash -euo pipefail`, and must exit 0 within 60 s. The blocks of one
 * page run in their order, in one temporary working folder, with `HOME` and `XDG_STATE_HOME` in a
 * fresh folder of that page (so each page starts with an empty ledger) and `terminus` on PATH (the
 * built dist/cli/main.js, which the global setup builds when stale). One `terminus serve` with the
 * demo tools on a temporary SQLite file listens on 127.0.0.1, port 0; every `127.0.0.1:3000` in a
 * block is replaced by its real address. Blocks that cannot run like that (a long-lived server,
 * PostgreSQL, a browser, a host) are fenced as plain "```sh".
 */
const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli/main.js');
const BLOCK_TIMEOUT_MS = 60_000;
const OPENING = '```sh run';

interface Block {
  readonly page: string;
  readonly line: number;
  readonly code: string;
}

/** README.md and every docs/**\/*.md but the generated and archived folders, in a stable order. */
function pages(): string[] {
  const found = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (path !== 'docs/api' && path !== 'docs/gate-runs') walk(path);
      } else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** The blocks opened by exactly "```sh run", each up to its closing fence. */
function runnableBlocks(page: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== OPENING) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`${page}:${start + 1}: a "${OPENING}" block is never closed`);
    blocks.push({ page, line: start + 1, code: body.join('\n') + '\n' });
  }
  return blocks;
}

const byPage = pages().map((page) => ({
  page,
  blocks: runnableBlocks(page, readFileSync(join(ROOT, page), 'utf8')),
}));

let work: string;
let shims: string;
let server: ChildProcess | undefined;
let address: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'terminus-docs-'));
  shims = join(work, 'bin');
  mkdirSync(shims);
  const shim = join(shims, 'terminus');
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`);
  chmodSync(shim, 0o755);
  server = spawn(
    process.execPath,
    [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', join(work, 'server.db')],
    { cwd: work, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const child = server;
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  address = await new Promise<string>((resolveAddress, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`terminus serve printed no listening line:\n${stderr}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on http:\/\/(127\.0\.0\.1:\d+)\//.exec(out);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      resolveAddress(match[1]);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`terminus serve exited ${code}:\n${stderr}`));
    });
  });
});

afterAll(async () => {
  const child = server;
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
    const timer = setTimeout(() => child.pid !== undefined && process.kill(child.pid, 'SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** The test's environment without the TERMINUS_* settings of whoever runs it. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('TERMINUS_')) env[key] = value;
  return { ...env, ...extra };
}

interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** `bash -euo pipefail -c CODE` in its own process group, killed as a group after the timeout. */
function runBlock(code: string, cwd: string, home: string): Promise<Ran> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', code], {
    cwd,
    detached: true,
    env: cleanEnv({
      PATH: `${shims}:${process.env.PATH ?? ''}`,
      HOME: join(home, 'home'),
      XDG_STATE_HOME: join(home, 'state'),
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, BLOCK_TIMEOUT_MS);
  return new Promise((resolveRun) =>
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolveRun({ code: exitCode, signal, timedOut, stdout, stderr });
    }),
  );
}

describe('runnable blocks in the docs', () => {
  it('finds some', () => {
    expect(byPage.flatMap((p) => p.blocks).length).toBeGreaterThan(0);
  });

  for (const { page, blocks } of byPage.filter((p) => p.blocks.length > 0)) {
    describe(page, () => {
      let cwd: string;
      let home: string;
      beforeAll(() => {
        const dir = join(work, relative(ROOT, join(ROOT, page)).replace(/[/.]/g, '_'));
        cwd = join(dir, 'cwd');
        home = dir;
        for (const sub of ['cwd', 'home', 'state']) mkdirSync(join(dir, sub), { recursive: true });
      });

      for (const block of blocks) {
        it(
          `${page}:${block.line}`,
          async () => {
            const code = block.code.replaceAll('127.0.0.1:3000', address);
            const ran = await runBlock(code, cwd, home);
            if (ran.code !== 0) {
              const how = ran.timedOut
                ? `did not finish within ${BLOCK_TIMEOUT_MS / 1000} s`
                : `exited ${ran.code ?? ran.signal}`;
              throw new Error(
                `${page}:${block.line}: the block ${how}\n--- block\n${code}--- stdout\n${ran.stdout}--- stderr\n${ran.stderr}`,
              );
            }
          },
          BLOCK_TIMEOUT_MS + 10_000,
        );
      }
    });
  }
});
