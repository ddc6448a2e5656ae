/**
 * Server processes of the harness: spawned from the repository root (bundled, or under tsx: see
 * `entries.ts`), on 127.0.0.1 port 0 (HTTP, the address read from the first stdout line) or on
 * stdio, and always reaped.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { entryArgs } from './entries.js';
import { currentServerCpus, onCpus } from './pin.js';
import { ROOT } from './root.js';
import { httpClient, initialize, stdioClient, type RpcClient } from '../client/rpc.js';

export { ROOT } from './root.js';

export type Transport = 'stdio' | 'http';

export interface ServerSpec {
  /** Entry file relative to the repository root. */
  readonly entry: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Extra node flags (`--expose-gc`). */
  readonly nodeFlags?: readonly string[];
  /** CPU list to run on (`taskset -c`); default: the server CPUs inside `withPinnedLoad`, else any. */
  readonly cpus?: string;
}

export interface RunningServer {
  readonly transport: Transport;
  readonly child: ChildProcessWithoutNullStreams;
  /** HTTP only: the MCP endpoint. */
  readonly url: string | undefined;
  /** A new initialized client: for stdio, the one connection (call once); for HTTP, a new session. */
  connect(options?: { listen?: boolean }): Promise<RpcClient>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** `kill -9`, resolving once the process is gone. */
  kill9(): Promise<void>;
}

const live = new Set<ChildProcessWithoutNullStreams>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Everything the bench client sends over HTTP (our bench server binds tasks to this principal). */
export const BENCH_TOKEN = 'bench';
export const BENCH_HEADERS = { authorization: `Bearer ${BENCH_TOKEN}` } as const;

export async function startServer(spec: ServerSpec, transport: Transport): Promise<RunningServer> {
  // taskset execs node in place, so the pid (and kill -9) is the server's own.
  const [command, args] = onCpus(spec.cpus ?? currentServerCpus(), process.execPath, [
    ...(spec.nodeFlags ?? []),
    ...entryArgs(spec.entry),
    '--transport',
    transport,
    ...spec.args,
  ]);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  const exited = once(child, 'exit').then(() => live.delete(child));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });

  let url: string | undefined;
  if (transport === 'http') {
    const lines = createInterface({ input: child.stdout });
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not listen within 30 s: ${stderr}`)), 30_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited (${code}) before listening: ${stderr}`));
      });
      lines.on('line', (line) => {
        const match = /^listening (\S+)/.exec(line);
        if (match !== null) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
  }

  let stdioTaken = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return {
    transport,
    child,
    url,
    async connect(options = {}) {
      if (transport === 'stdio') {
        if (stdioTaken) throw new Error('a stdio server has one client');
        stdioTaken = true;
        const client = stdioClient(child);
        await initialize(client);
        return client;
      }
      const client = httpClient({ url: url!, headers: BENCH_HEADERS });
      await initialize(client);
      if (options.listen === true) await client.listen();
      return client;
    },
    stop: () => stop('SIGTERM'),
    kill9: () => stop('SIGKILL'),
  };
}

/** Runs `work` against a fresh server, always stopping it. */
export async function withServer<T>(
  spec: ServerSpec,
  transport: Transport,
  work: (server: RunningServer) => Promise<T>,
): Promise<T> {
  const server = await startServer(spec, transport);
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}
