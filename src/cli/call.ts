/**
 * `terminus call`: follows one long-running tool call through the executor, on a durable ledger,
 * like a workflow CLI's `execute` (Temporal): it submits (or re-attaches), shows what the server and
 * the executor are doing, and ends with the receipt.
 *
 * - Ctrl-C stops FOLLOWING (C9): the task keeps running, and the command prints how to follow it
 *   again and how to cancel it. A second Ctrl-C exits at once. `--cancel-on-interrupt` makes the
 *   first Ctrl-C send a cancel request instead and wait for the server's answer.
 * - Re-running the same command (server, tool, canonical arguments) re-attaches to its operation
 *   while that is in flight; after a receipt it starts a new one (`call-node.ts`). `--new` forces a
 *   new one, `--call-node ID` names the call node.
 *
 * stdout carries the result only (or, with `--json`, exactly one JSON object); the progress display,
 * prompts and messages go to stderr. Exit codes: `EXIT` in `call-outcome.ts`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { chooseCallNode, derivedCallNode, type CallNodeChoice } from './call-node.js';
import { EXIT } from './call-outcome.js';
import { parseArgs, serverOf, UsageError, type CallFlags } from './call-request.js';
import { CallSession } from './call-session.js';
import { openLedgerOrExit } from './open-ledger.js';
import { defaultLedgerPath } from './paths.js';
import { headersOf, serverOptions } from './server-flags.js';

export { EXIT, renderResult } from './call-outcome.js';
export type { CallOutcome } from './call-outcome.js';

/** What `--help` says after the options: the behaviours a person must know before pressing keys. */
export const CALL_HELP = `
Follow, detach, resume, cancel:
  Ctrl-C            stop following; the task keeps running. The command prints how to follow it
                    again (terminus ops resume ID, or the same command) and how to cancel it
                    (terminus ops cancel ID). A second Ctrl-C exits at once.
  --cancel-on-interrupt
                    Ctrl-C sends a cancel request instead and waits for the server's answer.
  --follow-logs     the task's own log, line by line above the status line (stderr), with
                    "-- re-run, epoch N --" and dropped-line markers; terminus ops logs ID reads it later.
  same command again
                    re-attaches to its operation while it is in flight; once it has a receipt, a
                    re-run starts a new operation. --new always starts one.
  input questions   [y]es accepts, [n]o declines (the tool decides), [c]ancel cancels the task;
                    Ctrl-C leaves the question unanswered (asked again when you follow it).

Exit codes: 0 completed; 1 failed, tool error (isError), refused or unreachable; 2 usage;
3 detached, budget used up, expired or unknown (see terminus ops); 4 the server refused the
credentials or the operation was submitted under others (--token, --header); 130 cancelled;
141 stdout's reader left before the result was printed (terminus ops result ID has it).`;

export function registerCall(program: Command): void {
  const command = program
    .command('call')
    .description('Call a long-running MCP tool and follow it: progress, input prompts, a receipt at the end')
    .argument('<tool>', 'tool name')
    .option('--url <url>', 'MCP endpoint (Streamable HTTP), e.g. http://127.0.0.1:3000/mcp')
    .option('--stdio <command>', 'spawn a server and speak MCP on its stdin/stdout')
    .option('--args <json|@file>', 'tool arguments as a JSON object, or @FILE to read them from a file', '{}');
  serverOptions(command)
    .option('--ledger <file|url>', 'SQLite ledger file or postgres:// URL (env TERMINUS_LEDGER)', defaultLedgerPath())
    .addOption(
      new Option('--wire <wire>', 'wire for the submission')
        .choices(['auto', 'mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'])
        .default('auto'),
    )
    .option('--budget <seconds>', 'stop following after this long (the task keeps running)', parseSeconds)
    .option('--call-node <id>', 'call node id; the same id never submits twice (default: derived from the command)')
    .option('--new', 'start a new operation even if this command is still in flight', false)
    .option('--cancel-on-interrupt', 'Ctrl-C sends a cancel request instead of only stopping to follow', false)
    .option('--json', 'print exactly one JSON object (receipt + result) on stdout', false)
    .option('--verbose', 'executor logs on stderr', false)
    .option(
      '--follow-logs',
      "print the task's own log as it is written, above the progress line (stderr; JSON lines with --json)",
      false,
    )
    .addHelpText('after', CALL_HELP)
    .exitOverride(usageExit)
    .action(async (tool: string, flags: CallFlags) => {
      process.exitCode = await runCall(tool, flags);
    });
}

/** Commander's own errors (unknown option, missing argument, bad choice) are usage errors: 2. */
export function usageExit(error: { readonly exitCode: number }): never {
  process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
}

export function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('a positive number of seconds');
  return seconds;
}

async function runCall(tool: string, flags: CallFlags): Promise<number> {
  let args: Record<string, unknown>;
  let server: string;
  let headers: Record<string, string>;
  try {
    args = parseArgs(flags.args);
    server = serverOf(flags);
    headers = headersOf(flags);
    if (flags.stdio !== undefined && (flags.header.length > 0 || flags.token !== undefined)) {
      throw new UsageError('--header and --token apply to --url servers only');
    }
    if (flags.new && flags.callNode !== undefined) {
      throw new UsageError('--new and --call-node exclude each other: a named call node is always the same call');
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`terminus call: ${error.message}\n`);
    return EXIT.usage;
  }
  const ledger = await openLedgerOrExit(flags.ledger, 'terminus call');
  try {
    const choice: CallNodeChoice =
      flags.callNode !== undefined
        ? { kind: 'first', callNodeId: flags.callNode }
        : await chooseCallNode(ledger, derivedCallNode(server, tool, args), flags.new);
    const session = new CallSession(ledger, { server, tool, args, headers }, flags);
    const outcome = await session.run(choice);
    session.print(outcome);
    return outcome.exitCode;
  } finally {
    await ledger.close();
  }
}
