/**
 * Multi-round-trip input before a task exists (SEP-2322 MRTR, X-11): a tool may need answers before
 * it can even be submitted, e.g. a name to greet. A preflight runs on every `tools/call` of its tool;
 * it either asks (the call answers `resultType: "input_required"`, nothing is written) or proceeds
 * with the final arguments, which are what gets submitted and digested.
 *
 * On 2025-era connections the same preflight is asked the 2025 way: each question becomes a
 * server-to-client request (`elicitation/create`, `sampling/createMessage`, `roots/list`) on the
 * call's own stream, and the preflight runs again with the answers.
 */

/** An elicitation form (`elicitation/create`, form mode): the default kind of question. */
export interface PreflightForm {
  readonly kind?: 'form';
  readonly message: string;
  /** The restricted JSON Schema of an `elicitation/create` form. */
  readonly requestedSchema: Record<string, unknown>;
}

/** A completion by the client's model (`sampling/createMessage`); `params` as the method takes them. */
export interface PreflightSampling {
  readonly kind: 'sampling';
  readonly params: {
    readonly messages: readonly unknown[];
    readonly maxTokens: number;
    readonly [key: string]: unknown;
  };
}

/** The client's roots (`roots/list`). */
export interface PreflightRoots {
  readonly kind: 'roots';
}

/** One question a preflight asks, keyed in `PreflightOutcome.ask`. */
export type PreflightQuestion = PreflightForm | PreflightSampling | PreflightRoots;

/** The kind of a question, `form` when it names none. */
export function questionKind(question: PreflightQuestion): 'form' | 'sampling' | 'roots' {
  return question.kind ?? 'form';
}

/** The client's answer to one question, as the retried request (or the 2025 reply) carries it. */
export type PreflightAnswer =
  | {
      readonly kind: 'form';
      readonly action: 'accept' | 'decline' | 'cancel';
      readonly content?: Record<string, unknown>;
    }
  | { readonly kind: 'sampling'; readonly result: Record<string, unknown> }
  | { readonly kind: 'roots'; readonly roots: readonly { readonly uri: string; readonly name?: string }[] };

/** Which kinds of question this caller declared it can answer (its client capabilities). */
export interface PreflightCapabilities {
  readonly form: boolean;
  readonly sampling: boolean;
  readonly roots: boolean;
}

export interface PreflightCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The accepted form content the retried request carries under `key`, else undefined. */
  readonly accepted: (key: string) => Record<string, unknown> | undefined;
  /** Any answer (form, sampling or roots) the retried request carries under `key`, else undefined. */
  readonly answer: (key: string) => PreflightAnswer | undefined;
  /**
   * The `state` the previous round's `ask` carried, verified as the server's own for this tool and
   * caller (a tampered or foreign state never gets here: the call is refused with `-32602`);
   * undefined on the first round. On the 2026-07-28 wire a retried request carries only the
   * answers to the latest questions, so a preflight of several rounds keeps earlier answers here.
   */
  readonly state: unknown;
  /**
   * What the caller can be asked. A question of a kind it did not declare is refused for the
   * preflight (`-32021` naming the capability on 2026-07-28), so a preflight with a choice SHOULD
   * ask only what the caller can answer.
   */
  readonly canAsk: PreflightCapabilities;
}

export type PreflightOutcome =
  | {
      readonly kind: 'ask';
      readonly questions: Readonly<Record<string, PreflightQuestion>>;
      /**
       * JSON the next round gets back as `call.state`. On 2026-07-28 it travels in `requestState`,
       * signed (HMAC-SHA256) and bound to the tool and caller, so the client can read but not
       * change it: never put secrets in it.
       */
      readonly state?: unknown;
    }
  | { readonly kind: 'proceed'; readonly args: Record<string, unknown> };

/** MUST be pure and fast: it runs on the request path, before anything is durable. */
export type Preflight = (call: PreflightCall) => PreflightOutcome;

/** The client capability each kind of question needs, as `requiredCapabilities` names it. */
export const QUESTION_CAPABILITY = { form: 'elicitation', sampling: 'sampling', roots: 'roots' } as const;

/** The capabilities `questions` need that `can` lacks, as a `ClientCapabilities` object (empty: none). */
export function missingCapabilities(
  questions: Readonly<Record<string, PreflightQuestion>>,
  can: PreflightCapabilities,
): Record<string, Record<string, never>> {
  const missing: Record<string, Record<string, never>> = {};
  for (const question of Object.values(questions)) {
    const kind = questionKind(question);
    if (!can[kind]) missing[QUESTION_CAPABILITY[kind]] = {};
  }
  return missing;
}

/** What a `ClientCapabilities` object lets a preflight ask (form elicitation unless only `url` is declared). */
export function capabilitiesOf(declared: unknown): PreflightCapabilities {
  const caps = isObject(declared) ? declared : {};
  const elicitation = caps.elicitation;
  const form = isObject(elicitation) && (elicitation.form !== undefined || elicitation.url === undefined);
  return { form, sampling: isObject(caps.sampling), roots: isObject(caps.roots) };
}

/** Reads one raw answer (a bare `ElicitResult`, `CreateMessageResult` or `ListRootsResult`), else undefined. */
export function answerOf(raw: unknown): PreflightAnswer | undefined {
  if (!isObject(raw)) return undefined;
  const action = raw.action;
  if (action === 'accept' || action === 'decline' || action === 'cancel') {
    return isObject(raw.content) ? { kind: 'form', action, content: raw.content } : { kind: 'form', action };
  }
  if (Array.isArray(raw.roots)) {
    const roots = raw.roots.filter(
      (r): r is { uri: string; name?: string } =>
        isObject(r) && typeof r.uri === 'string' && (r.name === undefined || typeof r.name === 'string'),
    );
    return { kind: 'roots', roots };
  }
  if (raw.role === 'assistant' && raw.content !== undefined) return { kind: 'sampling', result: raw };
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
