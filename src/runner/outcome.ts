import { digestOf } from '../core/digest.js';
import type { RpcError } from '../core/task.js';
import type { FinishInput } from '../store/port.js';
import { ToolRpcError, type TaskToolDefinition, type ToolResult } from './tool.js';

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
 * `completed` with `isError: true`. With the tool given, a result that is not a
 * tool error must carry `structuredContent` matching the tool's `outputSchema`; otherwise it is a
 * tool error naming the mismatch (the MCP rule: structured results conform to the listed schema).
 */
export function toOutcome(settled: Settled, tool?: Pick<TaskToolDefinition, 'name' | 'outputSchema'>): ToolOutcome {
  if (settled.ok) {
    if (!isToolResult(settled.value)) {
      return { status: 'completed', result: toolError('Tool handler returned a value that is not a CallToolResult') };
    }
    const mismatch = tool === undefined ? undefined : outputMismatch(tool, settled.value);
    return { status: 'completed', result: mismatch === undefined ? settled.value : toolError(mismatch) };
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

/** Why `result` breaks the tool's `outputSchema`, or undefined when it conforms (or need not). */
export function outputMismatch(
  tool: Pick<TaskToolDefinition, 'name' | 'outputSchema'>,
  result: ToolResult,
): string | undefined {
  if (tool.outputSchema === undefined || result.isError === true) return undefined;
  if (result.structuredContent === undefined) {
    return `Tool ${tool.name} has an outputSchema but returned no structuredContent`;
  }
  const parsed = tool.outputSchema.safeParse(result.structuredContent);
  if (parsed.success) return undefined;
  const issues = parsed.error.issues.map((i) =>
    i.path.length === 0 ? i.message : `${i.path.join('.')}: ${i.message}`,
  );
  return `Tool ${tool.name} returned structuredContent that does not match its outputSchema: ${issues.join('; ')}`;
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
