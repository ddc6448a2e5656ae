#!/usr/bin/env node
import { Command } from 'commander';
import { onBrokenPipe } from './broken-pipe.js';
import { registerCall, usageExit } from './call.js';
import { registerOps } from './ops.js';
import { registerOpsUi } from './ops-ui.js';
import { registerGate } from './gate.js';
import { registerServe } from './serve.js';
import { registerWorker } from './worker.js';
import { registerTools } from './tools.js';
import { registerWebhooks } from './webhooks.js';

/**
 * The `terminus` command. Each subcommand lives in its own file and registers itself here, and
 * inherits the exit status of a usage error: 2, never 1, which says a gate failed or a call did.
 */
const program = new Command()
  .name('terminus')
  .description('Durable long-running MCP tool calls: every call ends in exactly one terminal state.')
  .version('0.1.0')
  .exitOverride(usageExit);

onBrokenPipe();
registerServe(program);
registerGate(program);
registerCall(program);
registerOps(program);
registerWorker(program);
registerOpsUi(program);
registerTools(program);
registerWebhooks(program);
(await import('./bridge.js')).registerBridge(program);

await program.parseAsync(process.argv);
