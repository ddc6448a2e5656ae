import type { z } from 'zod';
import { TerminusError } from '../core/errors.js';
import type { ExecutorOptions, ValidationContext } from './executor-types.js';
import type { Receipt } from './ledger-port.js';

type ResultValidator = NonNullable<ExecutorOptions['validateResult']>;

/**
 * A `validateResult` for `createExecutor` that checks each completed result's `structuredContent`
 * against the caller's copy of the tool's `outputSchema`, by tool name (tools not named pass). A
 * result that is not a tool error (`isError`) and has no matching `structuredContent` is refused, so
 * it is never accepted: unverifiable, refetched, then UNKNOWN, as any `validateResult` refusal. The
 * schemas are the caller's: a server that changed its tool's output under the caller is caught here.
 * `next` runs after a passing check (the caller's own validation).
 * @example
 * const executor = await createExecutor({ ledger, connect, validateResult: validateOutputSchemas({ report: reportOutput }) });
 */
export function validateOutputSchemas(
  schemas: Readonly<Record<string, z.ZodType>>,
  next?: ResultValidator,
): ResultValidator {
  return async (result: Record<string, unknown>, context: ValidationContext) => {
    const schema = Object.hasOwn(schemas, context.tool) ? schemas[context.tool] : undefined;
    if (schema !== undefined && result.isError !== true) {
      const parsed = schema.safeParse(result.structuredContent);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) =>
          i.path.length === 0 ? i.message : `${i.path.join('.')}: ${i.message}`,
        );
        throw new TerminusError(
          'invalid_argument',
          `structuredContent of ${context.tool} (task ${context.taskId}) does not match its outputSchema: ${issues.join('; ')}`,
        );
      }
    }
    await next?.(result, context);
  };
}

/**
 * The `structuredContent` of a completed receipt, typed by (and parsed with) the tool's
 * `outputSchema`. Throws `invalid_argument` for a receipt that did not complete, a tool error, or a
 * mismatch (an executor built with `validateOutputSchemas` never accepts one).
 * @example
 * const receipt = await (await executor.submit({ callNodeId, server: 'reports', tool: 'report', args })).result();
 * const { pages } = typedResult(receipt, reportOutput); // typed from the schema
 */
export function typedResult<T>(receipt: Receipt, schema: z.ZodType<T>): T {
  if (receipt.status !== 'completed') {
    throw new TerminusError('invalid_argument', `receipt ${receipt.id} is ${receipt.status}, not completed`);
  }
  const payload = receipt.payload as { isError?: unknown; structuredContent?: unknown } | null;
  if (payload?.isError === true) {
    throw new TerminusError('invalid_argument', `receipt ${receipt.id} is a tool error (isError: true)`);
  }
  const parsed = schema.safeParse(payload?.structuredContent);
  if (!parsed.success) {
    throw new TerminusError('invalid_argument', `receipt ${receipt.id}: structuredContent does not match the schema`);
  }
  return parsed.data;
}
