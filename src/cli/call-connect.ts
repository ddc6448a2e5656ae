/**
 * How the CLI names and reaches servers. The executor stores a server NAME with each operation and
 * asks a `Connector` for its wire; the CLI's names are self-describing descriptors, so `terminus
 * ops resume` can reconnect from the ledger alone:
 *
 * - `http://host:port/mcp` (or https): Streamable HTTP;
 * - `stdio:COMMAND ARGS...`: a server spawned on stdin/stdout (words split like a shell, quotes kept).
 */
import { TerminusError } from '../core/errors.js';
import type { Clock } from '../core/ports.js';
import type { WireName } from '../core/task.js';
import { connectServer, type ServerTarget, type WireChoice } from '../executor/adapters/index.js';
import type { Connector } from '../executor/executor-types.js';
import type { SessionBinding } from '../executor/operation.js';
import type { ClientWire, TaskSnapshot } from '../executor/wire-port.js';
import { observeSnapshots } from '../executor/observe-snapshots.js';
import { ledgerFailure } from './open-ledger.js';

const STDIO_PREFIX = 'stdio:';

/**
 * The descriptor of an http(s) URL. One without a scheme (`127.0.0.1:3000/mcp`, `localhost:3000`,
 * which `URL` reads as the scheme `localhost:`) says so and gives the URL with `http://` in front.
 */
export function urlDescriptor(url: string): string {
  // host, host:port, [v6]:port, each with an optional path: a URL without its scheme.
  if (/^(?:[\w.-]+|\[[\d:a-fA-F.]+\])(?::\d+)?(?:[/?#].*)?$/s.test(url.trim())) {
    throw new Error(`${url} lacks its scheme: use http://${url.trim()} (or https://)`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${url} (use http://host:port/mcp)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`not an http(s) URL: ${url}`);
  return parsed.toString();
}

export function stdioDescriptor(command: string): string {
  if (splitCommand(command).length === 0) throw new Error('empty --stdio command');
  return `${STDIO_PREFIX}${command.trim()}`;
}

/** Splits a command line into words: whitespace separates, single and double quotes group, `\` escapes. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote !== null) throw new Error('unterminated quote in --stdio command');
  if (inWord) words.push(word);
  return words;
}

export interface TargetOptions {
  /** Child stderr for stdio servers; default `ignore` (their logs would tear the progress line). */
  readonly stderr?: 'inherit' | 'ignore';
  /** Extra HTTP headers (`--header`, `--token`); not used for stdio servers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The connection target a descriptor names. */
export function targetOf(descriptor: string, options: TargetOptions = {}): ServerTarget {
  if (descriptor.startsWith(STDIO_PREFIX)) {
    const [command, ...args] = splitCommand(descriptor.slice(STDIO_PREFIX.length));
    if (command === undefined) throw new Error(`empty command in ${descriptor}`);
    // A CLI behaves like a shell: the server sees our environment (the SDK default passes a subset).
    const env = Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
    // A command killed with SIGKILL must not leave the server it started running (a guard process
    // ends the server's whole group when this process is gone), as the bridge does.
    return { command, args, env, stderr: options.stderr ?? 'ignore', endWithParent: true };
  }
  const headers = options.headers ?? {};
  return Object.keys(headers).length === 0
    ? { url: urlDescriptor(descriptor) }
    : { url: urlDescriptor(descriptor), headers };
}

/**
 * One line for a failure to connect or negotiate, naming the server and what to do. An HTTP 404 or
 * 405 means the URL answers but is not an MCP endpoint (most often a wrong path).
 */
export function connectMessage(server: string, error: unknown): string {
  const status = (error as { httpStatus?: unknown }).httpStatus;
  const text = error instanceof Error ? error.message : String(error);
  const http = typeof status === 'number' ? status : Number(/HTTP (\d{3})/.exec(text)?.[1] ?? NaN);
  if (http === 404 || http === 405) {
    return `no MCP endpoint at ${server}: HTTP ${http} (check the path; terminus serve answers on /mcp)`;
  }
  if (http === 401 || http === 403) {
    return `${server} refused the credentials (${text}): pass --token T (or TERMINUS_TOKEN) or --header 'Authorization: …'`;
  }
  const code = (error as { code?: unknown }).code;
  const detail = typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
  return `cannot reach ${server}: ${detail} (is the server running? check --url)`;
}

/**
 * One line for a failure while driving a call: an error of ours is the ledger's (the wire's errors
 * are the SDK's), anything else a failure to reach `server`.
 */
export function driveFailure(server: string | undefined, ledger: string, error: unknown): string {
  if (error instanceof TerminusError) return ledgerFailure(ledger, error);
  return server === undefined ? String(error) : connectMessage(server, error);
}

/** What a server said about a task, as the wire decoded it: the display's status message and progress. */
export type SnapshotListener = (snapshot: TaskSnapshot) => void;

/** Passes every decoded snapshot (submit, status and events answers) to `listener`; changes nothing else. */
export function observeWire(wire: ClientWire, listener: SnapshotListener): ClientWire {
  return observeSnapshots(wire, (snapshot) => {
    try {
      listener(snapshot);
    } catch {
      // The display must never break the call.
    }
  });
}

export interface CliConnectorOptions extends TargetOptions {
  readonly clock: Clock;
  /** The wire for new submissions; a resumed operation always uses the wire that created it. */
  readonly wire: WireChoice;
  readonly timeoutMs?: number;
  readonly onSnapshot?: SnapshotListener;
}

export function cliConnector(options: CliConnectorOptions): Connector {
  return async (server: string, wire?: WireName, session?: SessionBinding) => {
    const choice: WireChoice = wire ?? options.wire;
    const connected = await connectServer(targetOf(server, options), {
      clock: options.clock,
      wire: choice,
      // A resumed operation continues the HTTP session it was created in, where its wire has one.
      ...(session === undefined ? {} : { session }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
    return options.onSnapshot === undefined ? connected : observeWire(connected, options.onSnapshot);
  };
}
