/**
 * The bridge as a host meets it: `terminus bridge` as a child process (stdio or HTTP) with an SDK
 * 2.4 client in front, and `terminus serve --fixtures conformance` (or a foreign server) behind.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StdioClientTransport as Stdio132 } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll } from 'vitest';
import { killAll, MAIN, ROOT, start, startServe, tempDir, tsNode, type Served } from '../cli/helpers.js';

/** The request timeout a host that cannot wait uses in these tests (the 5 s). */
export const HOST_TIMEOUT_MS = 5_000;

export interface BridgeClient {
  readonly client: Client;
  readonly pid: number;
  close(): Promise<void>;
}

export interface BridgeClientOptions {
  readonly ledger: string;
  /** `name=target` specs. */
  readonly upstreams: readonly string[];
  readonly inlineWaitSeconds?: number;
  readonly extra?: readonly string[];
  /** Declare elicitation and answer with this (null: declare nothing). */
  readonly elicitation?: ((params: Record<string, unknown>) => Record<string, unknown>) | null;
  /** Extra environment of the bridge process (its stdio upstreams inherit it). */
  readonly env?: Readonly<Record<string, string>>;
  /** Receives the bridge's stderr (ignored when absent). */
  readonly onStderr?: (text: string) => void;
  /** How long the host waits for the bridge's `initialize` answer (default 60 s). */
  readonly connectTimeoutMs?: number;
}

/** Spawns `terminus bridge` over stdio and connects an SDK 2.4 client (default 2025-11-25 handshake). */
export async function connectBridge(options: BridgeClientOptions): Promise<BridgeClient> {
  const elicitation = options.elicitation ?? null;
  const client = new Client(
    { name: 'bridge-test-host', version: '1.0.0' },
    { capabilities: elicitation === null ? {} : { elicitation: { form: {} } } },
  );
  if (elicitation !== null) {
    client.setRequestHandler(
      'elicitation/create',
      (request) => elicitation(request.params as Record<string, unknown>) as never,
    );
  }
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      ...tsNode(
        MAIN,
        'bridge',
        ...options.upstreams.flatMap((u) => ['--upstream', u]),
        '--ledger',
        options.ledger,
        '--inline-wait',
        String(options.inlineWaitSeconds ?? 2),
        ...(options.extra ?? []),
      ),
    ],
    cwd: ROOT,
    stderr: options.onStderr === undefined ? 'ignore' : 'pipe',
    ...(options.env === undefined ? {} : { env: { ...getDefaultEnvironment(), ...options.env } }),
  });
  const { onStderr } = options;
  if (onStderr !== undefined) transport.stderr?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8')));
  await client.connect(transport, { timeout: options.connectTimeoutMs ?? 60_000 });
  return {
    client,
    pid: transport.pid!,
    close: () => client.close(),
  };
}

/** A tool call as a host makes it: one request with the host's timeout. */
export function hostCall(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return client.callTool({ name, arguments: args }, { timeout: HOST_TIMEOUT_MS });
}

export const textOf = (result: CallToolResult): string =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

export interface OperationFacts {
  readonly id: string;
  readonly state: string;
  readonly attached?: boolean;
  readonly plain?: boolean;
  readonly outcome?: string;
  readonly input?: { key: string; message: string }[];
}

export function operationOf(result: CallToolResult): OperationFacts {
  const operation = (result.structuredContent as { operation?: OperationFacts } | undefined)?.operation;
  if (operation === undefined) throw new Error(`no operation in ${JSON.stringify(result)}`);
  return operation;
}

/** Waits through `terminus_wait` until the result, or an end without one (UNKNOWN...), comes (bounded: `rounds` calls). */
export async function waitResult(client: Client, id: string, rounds = 60): Promise<CallToolResult> {
  for (let i = 0; i < rounds; i++) {
    const result = await hostCall(client, 'terminus_wait', { operation: id });
    const structured = result.structuredContent as { operation?: unknown; next?: unknown } | undefined;
    if (structured?.operation === undefined) return result;
    if (operationOf(result).outcome !== undefined) return result;
    if (structured.next === 'operator' || structured.next === 'none') return result;
  }
  throw new Error(`operation ${id} still running after ${rounds} terminus_wait calls`);
}

/** Tasks `terminus serve` created whose arguments carry this label. */
export function upstreamTasks(db: string, label: string): number {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const row = sqlite
      .prepare("SELECT count(*) AS n FROM tasks WHERE json_extract(args, '$.label') = ?")
      .get(label) as { n: number };
    return row.n;
  } finally {
    sqlite.close();
  }
}

/** Receipts and operations of the ledger whose tool arguments carry this label. */
export function ledgerFacts(ledger: string, label: string): { operations: number; receipts: number } {
  const sqlite = new Database(ledger, { readonly: true, fileMustExist: true });
  try {
    const ops = sqlite.prepare('SELECT id, call_node_id FROM operations').all() as {
      id: string;
      call_node_id: string;
    }[];
    const record = sqlite.prepare('SELECT * FROM operations WHERE id = ?');
    const mine = ops.filter((op) => JSON.stringify(record.get(op.id)).includes(label));
    const receipts = sqlite.prepare('SELECT count(*) AS n FROM receipts WHERE call_node_id = ?');
    return {
      operations: mine.length,
      receipts: mine.reduce((n, op) => n + (receipts.get(op.call_node_id) as { n: number }).n, 0),
    };
  } finally {
    sqlite.close();
  }
}

export const ledgerIn = (dir: string, name: string): string => join(dir, `${name}.db`);

/** `terminus bridge --port 0 ARGS` over HTTP, run in `cwd`; resolves to its `/mcp` URL once it listens. */
export async function startHttpBridge(cwd: string, args: readonly string[]): Promise<string> {
  const bridge = start(tsNode(MAIN, 'bridge', '--port', '0', ...args), { cwd });
  return (await bridge.waitFor(/http:\/\/127\.0\.0\.1:\d+\/mcp/, 'stdout')).trim();
}

/** What `useServeAndBridge` started, for the file's tests (read it inside a test, once started). */
export interface ServeAndBridge {
  /** The temporary directory both run in (removed after the file). */
  readonly dir: string;
  /** `terminus serve --fixtures conformance`, the bridge's upstream `reports`. */
  readonly served: Served;
  /** The bridge's `/mcp` URL. */
  readonly url: string;
  /** The bridge's ledger file. */
  readonly ledger: string;
}

/**
 * Before the file's tests: `terminus serve --fixtures conformance` and, in front of it as upstream
 * `reports`, `terminus bridge` over HTTP with its ledger `ledger` in the same temporary directory,
 * `--inline-wait 1` and `extra`; after them, both stopped and the directory removed.
 */
export function useServeAndBridge(prefix: string, ledger: string, extra: readonly string[] = []): ServeAndBridge {
  const dir = tempDir(prefix);
  let started: { served: Served; url: string } | undefined;
  const get = (): { served: Served; url: string } => {
    if (started === undefined) throw new Error('serve and bridge are not started yet');
    return started;
  };
  beforeAll(async () => {
    const served = await startServe(dir.path, ['--fixtures', 'conformance']);
    started = { served, url: '' };
    const url = await startHttpBridge(dir.path, [
      '--upstream',
      `reports=${served.url}`,
      '--ledger',
      join(dir.path, ledger),
      '--inline-wait',
      '1',
      ...extra,
    ]);
    started = { served, url };
  }, 180_000);
  afterAll(async () => {
    await started?.served.stop();
    killAll();
    dir.remove();
  });
  return {
    dir: dir.path,
    ledger: join(dir.path, ledger),
    get served() {
      return get().served;
    },
    get url() {
      return get().url;
    },
  };
}

/**
 * A stdio transport (SDK 1.32, a 2025-11-25 host) to a new `terminus bridge` in front of the
 * `reports` upstream `useServeAndBridge` started, with its own ledger `ledger` beside the other.
 */
export function stdioBridge132(front: ServeAndBridge, ledger: string, extra: readonly string[] = []): Stdio132 {
  return new Stdio132({
    command: process.execPath,
    args: tsNode(
      MAIN,
      'bridge',
      '--upstream',
      `reports=${front.served.url}`,
      '--ledger',
      join(front.dir, ledger),
      ...extra,
    ),
    cwd: ROOT,
    stderr: 'ignore',
  });
}
