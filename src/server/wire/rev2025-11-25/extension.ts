import type { JSONRPCRequest, Server, ServerContext } from '@modelcontextprotocol/server';
import type { TaskSupport } from '../../../runner/tool.js';
import type { ListedTool } from '../../tools-list.js';
import type { WireDeps } from '../adapter.js';

/** A legacy `tools/list` entry: the base entry plus the 2025 `execution` and SEP-1391 fields. */
export interface LegacyListedTool extends ListedTool {
  execution?: { taskSupport: TaskSupport };
  invocationMode?: 'sync' | 'async';
}

/**
 * A protocol that shares the 2025-era `tools/call` and `tools/list` with this wire (SEP-1391). The
 * 2025 wire owns both methods on legacy-era servers; an extension sees each request first.
 */
export interface LegacyToolExtension {
  /** Rewrites the list for this caller (filtering or annotating entries). */
  projectTools?(tools: readonly LegacyListedTool[], server: Server, ctx: ServerContext): LegacyListedTool[];
  /**
   * True when `callTool` never answers a call carrying the 2025 `task` (it leaves those to the
   * 2025 wire): then the fast path may create such a task without asking this extension first.
   */
  readonly leavesTaskCalls?: boolean;
  /** Answers a `tools/call` it owns, or returns undefined to leave it to the 2025 wire. */
  callTool?(
    request: JSONRPCRequest,
    ctx: ServerContext,
    server: Server,
    deps: WireDeps,
  ): Promise<Record<string, unknown>> | undefined;
}
