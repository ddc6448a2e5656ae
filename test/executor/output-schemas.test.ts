/**
 * Issue 15 item 5: typed client results. The executor checks `structuredContent` against the
 * caller's `outputSchema` before acceptance (a mismatch is unverifiable, like any `validateResult`
 * refusal: never receipted, UNKNOWN), and `typedResult` gives the typed value of a receipt. Real
 * server (createTerminus on SQLite in memory), real executor over HTTP.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/core/ports.js';
import { typedResult, validateOutputSchemas } from '../../src/executor/output-schemas.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminus, type Terminus } from '../../src/server/create-terminus.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { openExecutor } from './executor-helpers.js';

const measureOutput = z.object({ value: z.number(), unit: z.string() });

const measure = defineTaskTool({
  name: 'measure',
  description: 'Measures something',
  inputSchema: z.object({ value: z.number() }),
  outputSchema: measureOutput,
  handler: async ({ value }) => ({
    content: [{ type: 'text', text: `${value} mm` }],
    structuredContent: { value, unit: 'mm' },
  }),
});

let terminus: Terminus;
let url: string;
let closeHttp: () => Promise<void>;

beforeAll(async () => {
  terminus = await createTerminus({
    db: ':memory:',
    tools: [measure],
    logger: silentLogger,
    engine: { claimIntervalMs: 20 },
  });
  const http = await createTerminusServer({ engine: terminus.engine }).serveHttp({ port: 0 });
  url = http.url;
  closeHttp = () => http.close();
});
afterAll(async () => {
  await closeHttp();
  await terminus.close();
});

describe('typed client results', () => {
  it('a matching structuredContent is accepted, and typedResult types it from the schema', async () => {
    const { executor } = await openExecutor(url, { validateResult: validateOutputSchemas({ measure: measureOutput }) });
    try {
      const op = await executor.submit({ callNodeId: 'n-typed', server: 's', tool: 'measure', args: { value: 3 } });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      const out = typedResult(receipt, measureOutput);
      expectTypeOf(out).toEqualTypeOf<{ value: number; unit: string }>();
      expect(out).toEqual({ value: 3, unit: 'mm' });
      expect(() => typedResult(receipt, z.object({ value: z.string() }))).toThrow(/does not match/);
    } finally {
      await executor.close();
    }
  });

  it('a mismatch with the caller’s schema is never accepted: UNKNOWN with result_unverifiable', async () => {
    // The caller expects another shape than the server now returns (the tool changed under it).
    const expected = z.object({ value: z.number(), unit: z.enum(['m']) });
    const { executor, ledger } = await openExecutor(url, {
      policy: { minPollIntervalMs: 50, backoffBaseMs: 10, maxFetchAttempts: 2 },
      validateResult: validateOutputSchemas({ measure: expected }),
    });
    try {
      const op = await executor.submit({ callNodeId: 'n-skew', server: 's', tool: 'measure', args: { value: 1 } });
      await expect(op.result()).rejects.toMatchObject({ code: 'unknown' });
      const record = await ledger.loadByCallNode('n-skew');
      expect(record?.state).toBe('UNKNOWN');
      expect(record?.evidence.map((e) => e.kind)).toContain('result_unverifiable');
      expect(await ledger.getReceipt('n-skew')).toBeNull();
    } finally {
      await executor.close();
    }
  });

  it('tools the schemas do not name, and the caller’s own check, still run', async () => {
    const seen: string[] = [];
    const { executor } = await openExecutor(url, {
      validateResult: validateOutputSchemas({ other: z.object({}) }, (_result, context) => {
        seen.push(context.tool);
      }),
    });
    try {
      const op = await executor.submit({ callNodeId: 'n-other', server: 's', tool: 'measure', args: { value: 2 } });
      expect((await op.result()).status).toBe('completed');
      expect(seen).toEqual(['measure']);
    } finally {
      await executor.close();
    }
  });
});
