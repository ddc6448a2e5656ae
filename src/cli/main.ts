#!/usr/bin/env node
import { Command } from 'commander';
import { registerCall } from './call.js';
import { registerOps } from './ops.js';
import { registerOpsUi } from './ops-ui.js';
import { registerGate } from './gate.js';
import { registerServe } from './serve.js';
import { registerWorker } from './worker.js';
import { registerTools } from './tools.js';

/** The `terminus` command. Each subcommand lives in its own file and registers itself here. */
const program = new Command()
  .name('terminus')
  .description('Durable long-running MCP tool calls: every call ends in exactly one terminal state.')
  .version('0.1.0');

registerServe(program);
registerGate(program);
registerCall(program);
registerOps(program);
registerWorker(program);
registerOpsUi(program);
registerTools(program);
(await import('./bridge.js')).registerBridge(program);

await program.parseAsync(process.argv);
