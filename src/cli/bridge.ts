/**
 * `terminus bridge`: an MCP server a host launches (stdio by default, Streamable HTTP with --port)
 * in front of upstream servers, so long tool calls return an operation handle within the inline
 * wait instead of timing out. Logs go to stderr (stdout carries only MCP messages over stdio).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Logger } from '../core/ports.js';
import {
  createBridge,
  DEFAULT_INLINE_WAIT_MS,
  DEFAULT_LIST_DEADLINE_MS,
  DEFAULT_MAX_TASK_TTL_MS,
  FRONTS,
  type Front,
} from '../bridge/index.js';
import { DEFAULT_MAX_POLL_INTERVAL_MS } from '../runner/poll-interval.js';
import type { ServerTarget } from '../executor/adapters/index.js';
import { targetOf } from './call-connect.js';
import { handOverStdout } from './broken-pipe.js';
import { openLedgerOrExit } from './open-ledger.js';
import { executorMetrics } from '../telemetry/executor.js';

interface BridgeFlags {
  readonly upstream: string[];
  readonly ledger: string;
  readonly inlineWait: number;
  readonly front: Front;
  readonly listDeadline: number;
  readonly maxPollInterval: number;
  readonly maxTaskTtl: number;
  readonly port?: number;
  readonly metricsPort?: number;
  readonly host: string;
  readonly name: string;
  readonly verbose: boolean;
}

/** Hosts start servers from any folder: the default ledger is in the home folder, not the cwd. */
const DEFAULT_BRIDGE_LEDGER = join(homedir(), '.terminus', 'bridge.db');

export function registerBridge(program: Command): void {
  program
    .command('bridge')
    .description('Serve upstream MCP tools to hosts that cannot wait: long calls return an operation handle')
    .option(
      '--upstream <name=target>',
      'upstream server (repeatable): name=http://host:port/mcp or name="stdio:COMMAND ARGS"',
      collect,
      [],
    )
    .option(
      '--ledger <file|url>',
      'SQLite ledger file or postgres:// URL (the same one after a restart)',
      DEFAULT_BRIDGE_LEDGER,
    )
    .option(
      '--inline-wait <seconds>',
      'how long a call waits before returning a handle; keep it below the host timeout',
      parseSeconds,
      DEFAULT_INLINE_WAIT_MS / 1000,
    )
    .addOption(
      new Option(
        '--front <front>',
        'auto: native tasks to hosts that declare them, tools (terminus_wait...) to the rest; tasks: also offer tasks to 2025 hosts that declare nothing; facade: tools to every host',
      )
        .choices(FRONTS)
        .default('auto'),
    )
    .option(
      '--list-deadline <seconds>',
      "how long each upstream's tools/list may take; one that misses it is left out (or listed from its last answer) and named",
      parseSeconds,
      DEFAULT_LIST_DEADLINE_MS / 1000,
    )
    .option(
      '--max-poll-interval <seconds>',
      'native tasks: cap of the poll interval a task suggests (it adapts to how long the tool takes)',
      parseSeconds,
      DEFAULT_MAX_POLL_INTERVAL_MS / 1000,
    )
    .option(
      '--max-task-ttl <seconds>',
      'native tasks: cap of the task.ttl a 2025-11-25 host is granted; past its ttl the task id is forgotten (the ledger keeps the operation)',
      parseSeconds,
      DEFAULT_MAX_TASK_TTL_MS / 1000,
    )
    .option('--port <port>', 'serve Streamable HTTP on this port (0 picks one) instead of stdio', parsePort)
    .option('--host <host>', 'interface for --port and --metrics-port', '127.0.0.1')
    .option(
      '--metrics-port <port>',
      'also serve GET /metrics (Prometheus) on this port; with --port, /metrics is on that port too',
      parsePort,
    )
    .option('--name <name>', 'namespace of this bridge in the ledger', 'terminus-bridge')
    .option('--verbose', 'logs on stderr', false)
    .action(async (flags: BridgeFlags) => {
      await runBridge(flags);
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('a positive number of seconds');
  return seconds;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('a port 0-65535');
  return port;
}

/** `name=target`; a bare target is named `upstream`. */
function upstreamsOf(specs: readonly string[]): Record<string, ServerTarget> {
  if (specs.length === 0) throw new Error('give at least one --upstream name=URL or name="stdio:COMMAND"');
  const upstreams: Record<string, ServerTarget> = {};
  for (const spec of specs) {
    // `name=` is a prefix without ':' (a URL or `stdio:` target has one before any '=').
    const match = /^([^:=]+)=(.+)$/s.exec(spec);
    const [name, target] = match === null ? ['upstream', spec] : [match[1]!, match[2]!];
    if (!/^[A-Za-z0-9-]{1,32}$/.test(name)) {
      throw new Error(`--upstream ${spec}: the name ${JSON.stringify(name)} must be 1-32 letters, digits or '-'`);
    }
    if (upstreams[name] !== undefined) throw new Error(`two upstreams named ${name}: name each --upstream name=...`);
    try {
      upstreams[name] = targetOf(target.trim());
    } catch (error) {
      throw new Error(
        `--upstream ${spec}: ${(error as Error).message} (use http(s)://host:port/mcp or "stdio:COMMAND")`,
      );
    }
  }
  return upstreams;
}

function stderrLogger(verbose: boolean): Logger {
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    process.stderr.write(`terminus bridge ${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`);
  return {
    debug: verbose ? write('debug') : () => undefined,
    info: verbose ? write('info') : () => undefined,
    warn: write('warn'),
    error: write('error'),
  };
}

async function runBridge(flags: BridgeFlags): Promise<void> {
  let upstreams: Record<string, ServerTarget>;
  try {
    upstreams = upstreamsOf(flags.upstream);
  } catch (error) {
    process.stderr.write(`terminus bridge: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const ledger = await openLedgerOrExit(flags.ledger, 'terminus bridge');
  const logger = stderrLogger(flags.verbose);
  let bridge;
  try {
    bridge = await createBridge({
      upstreams,
      ledger,
      name: flags.name,
      inlineWaitMs: Math.round(flags.inlineWait * 1000),
      front: flags.front,
      listDeadlineMs: Math.round(flags.listDeadline * 1000),
      maxPollIntervalMs: Math.round(flags.maxPollInterval * 1000),
      maxTaskTtlMs: Math.round(flags.maxTaskTtl * 1000),
      logger,
      metrics: executorMetrics(),
    });
  } catch (error) {
    process.stderr.write(`terminus bridge: ${(error as Error).message}\n`);
    await ledger.close();
    process.exit(1);
  }
  // Once: a host closes stdin and sends SIGTERM 2 s later (SDK hosts do); a second stop must not
  // exit while the first is still ending the upstreams.
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await bridge.close();
      await ledger.close();
      process.exit(0);
    })());
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  if (flags.metricsPort !== undefined) {
    // stderr: on stdio, stdout carries only MCP messages.
    const served = await bridge.serveMetrics({ port: flags.metricsPort, host: flags.host });
    process.stderr.write(`terminus bridge metrics on ${served.url}\n`);
  }
  if (flags.port !== undefined) {
    const http = await bridge.serveHttp({ port: flags.port, host: flags.host });
    process.stdout.write(`terminus bridge listening on ${http.url} (${bridge.resumed} operations resumed)\n`);
  } else {
    // stdio: the host closing stdin ends the bridge; operations stay in the ledger.
    handOverStdout();
    void bridge.serveStdio().closed.then(stop);
    process.stderr.write(`terminus bridge on stdio (${bridge.resumed} operations resumed)\n`);
  }
}
