import { digestOf } from '../core/digest.js';
import type { RpcError } from '../core/task.js';
import type { FinishInput } from '../store/port.js';
import { ToolRpcError, type ToolResult } from './tool.js';

/** How a handler call settled. */
export type Settled = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export async function settle(run: () => Promise<unknown>): Promise<Settled> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** What a handler's outcome means, independent of where it is stored. */
export type ToolOutcome =
  | { readonly status: 'completed'; readonly result: ToolResult }
  | { readonly status: 'failed'; readonly error: RpcError };

/**
 * Maps a settled handler to the outcome the wires see: a `ToolRpcError` is a JSON-RPC error
 * (`failed`, X-53); any other exception, and a malformed return value, is a tool error, reported as
 * `completed` with `isError: true`.
 */
export function toOutcome(settled: Settled): ToolOutcome {
  if (settled.ok) {
    if (isToolResult(settled.value)) return { status: 'completed', result: settled.value };
    return { status: 'completed', result: toolError('Tool handler returned a value that is not a CallToolResult') };
  }
  const error = settled.error;
  if (error instanceof ToolRpcError) return { status: 'failed', error: error.toRpcError() };
  return { status: 'completed', result: toolError(error instanceof Error ? error.message : String(error)) };
}

/** The store's terminal write for an outcome. The result is stored as the handler returned it. */
export function toFinish(outcome: ToolOutcome): FinishInput {
  if (outcome.status === 'failed') {
    return { status: 'failed', error: outcome.error, statusMessage: outcome.error.message };
  }
  const result = { ...outcome.result } as Record<string, unknown>;
  return { status: 'completed', result, resultDigest: digestOf(result) };
}

function toolError(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

function isToolResult(value: unknown): value is ToolResult {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Array.isArray((value as { content?: unknown }).content)
  );
}
