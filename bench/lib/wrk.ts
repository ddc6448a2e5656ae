/**
 * HTTP load from a C load generator (issue 31 item 2): Debian's `wrk`, driven by a generated Lua
 * script. The harness's own clients are Node `fetch` calls, and one core of them cannot send more
 * than about 2,500 `tasks/get`/s here, so every server measured through them (B0, the floor, ours)
 * came out at nearly the same rate: the figure measured the clients. wrk sends the same requests
 * (captured from the harness's clients, one per lane: session, token and headers included) from
 * the load CPUs, checks every answer, and reports the rate and its latency percentiles.
 *
 * Each request gets an id of its own (`"id":N` is rewritten per request), and each connection
 * sends one lane's request only, so a session has one request in flight at a time, as it had with
 * the harness's clients. Without `wrk` on the PATH the figures fall back
 * to the harness's clients, and the report says which load it used.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One HTTP request as a client sent it, with its JSON-RPC id cut out (`before` + id + `after`). */
export interface RequestTemplate {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly before: string;
  readonly after: string;
}

export interface WrkResult {
  readonly requests: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** `wrk`'s version line, or undefined when it is not on the PATH (the figures then use Node clients). */
export function wrkVersion(): string | undefined {
  const run = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (run.error !== undefined) return undefined;
  const line = `${run.stdout}${run.stderr}`.split('\n').find((l) => l.startsWith('wrk '));
  return line?.split(' Copyright')[0]?.trim() ?? 'wrk';
}

const ID_MARK = 987_654_321;

/**
 * The requests `send` makes, captured from `fetch` as it calls it (the harness's clients use the
 * global `fetch`), each turned into a template. `send` must make exactly one POST with a JSON-RPC
 * body.
 */
export async function captureRequest(send: () => Promise<unknown>): Promise<RequestTemplate> {
  const real = globalThis.fetch;
  const seen: { url: string; headers: Record<string, string>; body: string }[] = [];
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    if (input instanceof Request || typeof init?.body !== 'string') {
      throw new Error('captureRequest: only fetch(url, { body: string }) is captured');
    }
    seen.push({
      url: input.toString(),
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body: init.body,
    });
    return real(input, init);
  };
  try {
    await send();
  } finally {
    globalThis.fetch = real;
  }
  if (seen.length !== 1) throw new Error(`expected one request to capture, saw ${seen.length}`);
  const { url, headers, body } = seen[0]!;
  const message = JSON.parse(body) as { id?: unknown };
  if (typeof message.id !== 'number') throw new Error(`the captured request has no numeric id: ${body}`);
  const [before, after] = JSON.stringify({ ...message, id: ID_MARK }).split(String(ID_MARK)) as [string, string];
  return { url, headers, before, after };
}

const lua = (value: string): string => JSON.stringify(value); // a JSON string is a valid Lua string literal here

/**
 * The script: wrk thread `i` (one connection each) sends only template `i`, so a lane's session
 * has one request in flight at a time, as with the harness's clients; a fresh id each; every
 * answer checked for `expect`.
 */
function script(templates: readonly RequestTemplate[], expect: string): string {
  const entries = templates.map((t) => {
    const url = new URL(t.url);
    const headers = Object.entries(t.headers)
      .filter(([name]) => name !== 'content-length' && name !== 'host')
      .map(([name, value]) => `[${lua(name)}]=${lua(value)}`)
      .join(', ');
    return `{ path = ${lua(url.pathname + url.search)}, headers = { ${headers} }, before = ${lua(t.before)}, after = ${lua(t.after)} }`;
  });
  return `
local templates = { ${entries.join(',\n')} }
local sent = 0
bad = 0
first_bad = ""
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("lane", #threads)
end
function request()
  sent = sent + 1
  local t = templates[lane]
  return wrk.format("POST", t.path, t.headers, t.before .. (sent * 1000 + lane) .. t.after)
end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, ${lua(expect)}, 1, true) then
    if bad == 0 then first_bad = status .. " " .. string.sub(body, 1, 300) end
    bad = bad + 1
  end
end
function done(summary, latency, requests)
  local b, first = 0, ""
  for _, t in ipairs(threads) do
    b = b + t:get("bad")
    if first == "" then first = t:get("first_bad") end
  end
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"us":%d,"bad":%d,"errors":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, b, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
  io.write("WRK-FIRST-BAD " .. string.gsub(first, "[\\r\\n]", " ") .. "\\n")
end
`;
}

/**
 * One keep-alive connection per template for `seconds`, each on a wrk thread of its own sending
 * only its template, with ids unique across the run. Throws when any answer is not a 200 carrying
 * `expect`, or on any socket error or timeout: a rate counted over refusals would be no measure.
 */
export async function runWrk(options: {
  readonly templates: readonly RequestTemplate[];
  readonly seconds: number;
  readonly expect: string;
}): Promise<WrkResult> {
  const { templates, seconds, expect } = options;
  const connections = templates.length;
  if (templates.length === 0) throw new Error('runWrk: no requests');
  const dir = mkdtempSync(join(tmpdir(), 'terminus-wrk-'));
  try {
    const file = join(dir, 'load.lua');
    writeFileSync(file, script(templates, expect));
    const args = [
      '-t',
      String(connections),
      '-c',
      String(connections),
      '-d',
      `${seconds}s`,
      '--timeout',
      '10s',
      '-s',
      file,
    ];
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('wrk', [...args, templates[0]!.url], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 30) * 1000);
      child.once('error', reject);
      child.once('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
    const lines = run.stdout.split('\n');
    const line = lines.find((l) => l.startsWith('WRK '));
    if (run.status !== 0 || line === undefined) {
      throw new Error(`wrk failed (status ${run.status}): ${run.stderr}${run.stdout}`);
    }
    const firstBad = lines.find((l) => l.startsWith('WRK-FIRST-BAD '))?.slice(14) ?? '';
    const r = JSON.parse(line.slice(4)) as {
      requests: number;
      us: number;
      bad: number;
      errors: number;
      p50: number;
      p99: number;
    };
    if (r.bad > 0 || r.errors > 0) {
      throw new Error(
        `wrk: ${r.bad} answers without ${expect} and ${r.errors} socket errors in ${r.requests}; the first: ${firstBad}`,
      );
    }
    const secondsRun = r.us / 1e6;
    return {
      requests: r.requests,
      seconds: secondsRun,
      perSecond: r.requests / secondsRun,
      p50Ms: r.p50 / 1000,
      p99Ms: r.p99 / 1000,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The figures' load: each of `sends` (one lane's request through its own client) is made once and
 * captured, then wrk sends them back, one connection per lane, for `seconds`.
 */
export async function wrkLoad(
  sends: readonly (() => Promise<unknown>)[],
  seconds: number,
  expect: string,
): Promise<WrkResult> {
  const templates: RequestTemplate[] = [];
  for (const send of sends) templates.push(await captureRequest(send));
  return runWrk({ templates, seconds, expect });
}
