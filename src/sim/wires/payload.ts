/** Canonical payloads of the wire log, from what the client adapters decode (C2 compares them). */
import { canonicalJson } from '../../core/digest.js';
import type { ResultAnswer } from '../../executor/wire-port.js';
import type { AnswerFields } from './spec.js';

/** A `CallToolResult` without the envelope keys the wire adds (`resultType`, `_meta`). */
export function normalizeResult(result: unknown): unknown {
  if (result === null || typeof result !== 'object') return result;
  const { resultType: _r, _meta: _m, ...rest } = result as Record<string, unknown>;
  return rest;
}

/** The log fields of a decoded result answer: its status, and its payload as a receipt holds it. */
export function resultFields(answer: ResultAnswer): AnswerFields {
  if (answer.status === 'completed') {
    return { status: 'completed', payload: canonicalJson(normalizeResult(answer.result)) };
  }
  if (answer.status === 'failed') return { status: 'failed', payload: canonicalJson(answer.error) };
  return { status: 'cancelled' };
}

/** Runs a client decoder on an answer for the log; an answer it cannot decode logs no fields. */
export function decoded(decode: () => AnswerFields): AnswerFields {
  try {
    return decode();
  } catch {
    return {};
  }
}
