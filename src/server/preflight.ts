/**
 * Multi-round-trip input before a task exists (SEP-2322 MRTR, X-11): a tool may need answers before
 * it can even be submitted, e.g. a name to greet. A preflight runs on every `tools/call` of its tool;
 * it either asks (the call answers `resultType: "input_required"`, nothing is written) or proceeds
 * with the final arguments, which are what gets submitted and digested.
 */

/** An elicitation form the preflight wants answered, keyed in `PreflightOutcome.ask`. */
export interface PreflightQuestion {
  readonly message: string;
  /** The restricted JSON Schema of an `elicitation/create` form. */
  readonly requestedSchema: Record<string, unknown>;
}

export interface PreflightCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The accepted form content the retried request carries under `key`, else undefined. */
  readonly accepted: (key: string) => Record<string, unknown> | undefined;
}

export type PreflightOutcome =
  | { readonly kind: 'ask'; readonly questions: Readonly<Record<string, PreflightQuestion>> }
  | { readonly kind: 'proceed'; readonly args: Record<string, unknown> };

/** MUST be pure and fast: it runs on the request path, before anything is durable. */
export type Preflight = (call: PreflightCall) => PreflightOutcome;
