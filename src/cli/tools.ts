/**
 * `terminus tools`: the tools a server offers, with their argument schemas and whether each runs as
 * a task (what MCP Inspector's tool list shows first). Speaks 2026-07-28 (`server/discover`) when
 * the server does, else a 2025-11-25 `initialize`; `tools/list` is followed through every page.
 */
import { Command } from 'commander';
import { systemClock } from '../core/system.js';
import { createHttpConnection, createStdioConnection, type RpcConnection } from '../executor/adapters/index.js';
import { DEFAULT_CLIENT_INFO, LEGACY_PROTOCOL_VERSION, TASKS_EXTENSION } from '../executor/adapters/envelope.js';
import { WireFailure } from '../executor/wire-port.js';
import { targetOf, connectMessage, stdioDescriptor, urlDescriptor } from './call-connect.js';
import { EXIT } from './call-outcome.js';
import { isCredentialFailure } from './credential.js';
import { usageExit } from './call.js';
import { headersOf, serverOptions, type ServerFlags } from './server-flags.js';

interface ToolsFlags extends ServerFlags {
  readonly url?: string;
  readonly stdio?: string;
  readonly json: boolean;
}

/** Pages of `tools/list` followed at most; a server handing out cursors forever is cut off here. */
const MAX_PAGES = 100;

export function registerTools(program: Command): void {
  const command = program
    .command('tools')
    .description('List the tools of an MCP server: arguments, and whether each runs as a durable task')
    .option('--url <url>', 'MCP endpoint (Streamable HTTP), e.g. http://127.0.0.1:3000/mcp')
    .option('--stdio <command>', 'spawn a server and speak MCP on its stdin/stdout');
  serverOptions(command)
    .option('--json', 'print one JSON object: {server, tools} with every tool as the server sent it', false)
    .exitOverride(usageExit)
    .action(async (flags: ToolsFlags) => {
      process.exitCode = await listTools(flags);
    });
}

interface Listing {
  readonly protocolVersion: string;
  /** The server advertises task-augmented tool calls (the extension, or 2025-11-25 tasks). */
  readonly tasks: boolean;
  readonly tools: readonly Record<string, unknown>[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function listTools(flags: ToolsFlags): Promise<number> {
  if ((flags.url === undefined) === (flags.stdio === undefined)) {
    process.stderr.write('terminus tools: give exactly one of --url URL or --stdio "COMMAND"\n');
    return EXIT.usage;
  }
  let server: string;
  try {
    server = flags.url !== undefined ? urlDescriptor(flags.url) : stdioDescriptor(flags.stdio!);
  } catch (error) {
    process.stderr.write(`terminus tools: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  const target = targetOf(server, { headers: headersOf(flags) });
  let connection: RpcConnection | undefined;
  try {
    if ('connection' in target) connection = target.connection;
    else if ('url' in target) connection = createHttpConnection({ ...target, clock: systemClock });
    else connection = await createStdioConnection({ ...target, clock: systemClock });
    const listing = await list(connection);
    print(server, listing, flags.json);
    return EXIT.completed;
  } catch (error) {
    process.stderr.write(`terminus tools: ${connectMessage(server, error)}\n`);
    return isCredentialFailure(error) ? EXIT.unauthorized : EXIT.failed;
  } finally {
    await connection?.close();
  }
}

/**
 * The Tasks extension (2026-07-28) has no per-tool task support in `tools/list` (the SDK strips
 * `execution` there), so the tools are listed over a 2025-11-25 `initialize` whenever the server
 * accepts one, and over 2026-07-28 only when it does not.
 */
async function list(connection: RpcConnection): Promise<Listing> {
  const declined = (error: unknown): boolean =>
    error instanceof WireFailure && (error.kind === 'rejected' || error.kind === 'not_found');
  let extension = false;
  let modern = false;
  try {
    connection.era = 'modern';
    const discovered = await connection.request('server/discover', {});
    const extensions = isRecord(discovered.capabilities) ? discovered.capabilities.extensions : undefined;
    extension = isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
    modern = true;
  } catch (error) {
    if (!declined(error)) throw error;
  }
  try {
    connection.era = 'legacy';
    const init = await connection.request('initialize', {
      protocolVersion: LEGACY_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { ...DEFAULT_CLIENT_INFO },
    });
    const protocolVersion = typeof init.protocolVersion === 'string' ? init.protocolVersion : LEGACY_PROTOCOL_VERSION;
    connection.legacyVersion = protocolVersion;
    await connection.notify('notifications/initialized', {});
    const caps = isRecord(init.capabilities) ? init.capabilities : {};
    const requests = isRecord(caps.tasks) && isRecord(caps.tasks.requests) ? caps.tasks.requests : {};
    const legacyTasks = isRecord(requests.tools) && isRecord(requests.tools.call);
    const versions = modern ? `2026-07-28 + ${protocolVersion}` : protocolVersion;
    return { protocolVersion: versions, tasks: extension || legacyTasks, tools: await pages(connection) };
  } catch (error) {
    if (!modern || !declined(error)) throw error;
    connection.era = 'modern';
    return { protocolVersion: '2026-07-28', tasks: extension, tools: await pages(connection) };
  }
}

async function pages(connection: RpcConnection): Promise<Record<string, unknown>[]> {
  const tools: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await connection.request('tools/list', cursor === undefined ? {} : { cursor });
    if (Array.isArray(answer.tools)) tools.push(...answer.tools.filter(isRecord));
    cursor = typeof answer.nextCursor === 'string' && answer.nextCursor !== '' ? answer.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  return tools;
}

/** `required` / `optional` / `forbidden` from 2025-11-25 `execution`, or SEP-1391's `invocationMode`. */
export function taskSupportOf(tool: Record<string, unknown>): string {
  const execution = isRecord(tool.execution) ? tool.execution : undefined;
  if (typeof execution?.taskSupport === 'string') return execution.taskSupport;
  if (tool.invocationMode === 'async') return 'async (SEP-1391)';
  return 'forbidden';
}

/** `title: string (required), sections: integer = 12` from a JSON Schema object. */
export function argumentsOf(schema: unknown): string {
  if (!isRecord(schema) || !isRecord(schema.properties)) return '(none)';
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const parts = Object.entries(schema.properties).map(([name, raw]) => {
    const prop = isRecord(raw) ? raw : {};
    const type = Array.isArray(prop.enum)
      ? prop.enum.map((v) => JSON.stringify(v)).join('|')
      : typeof prop.type === 'string'
        ? prop.type
        : 'any';
    const extra = required.has(name)
      ? ' (required)'
      : prop.default === undefined
        ? ''
        : ` = ${JSON.stringify(prop.default)}`;
    return `${name}: ${type}${extra}`;
  });
  return parts.length === 0 ? '(none)' : parts.join(', ');
}

function print(server: string, listing: Listing, json: boolean): void {
  if (json) {
    const info = { url: server, protocolVersion: listing.protocolVersion, tasks: listing.tasks };
    process.stdout.write(`${JSON.stringify({ server: info, tools: listing.tools })}\n`);
    return;
  }
  const lines = [
    `${server}  (${listing.protocolVersion}; task tool calls ${listing.tasks ? 'advertised' : 'not advertised'}; ${listing.tools.length} tools)`,
  ];
  for (const tool of listing.tools) {
    const description = typeof tool.description === 'string' ? tool.description.split('\n')[0]! : '';
    lines.push(
      '',
      `${String(tool.name)}  [task: ${taskSupportOf(tool)}]${description === '' ? '' : `  ${description}`}`,
    );
    lines.push(`  arguments: ${argumentsOf(tool.inputSchema)}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
