import { createHash } from 'node:crypto';
import { TerminusError } from './errors.js';

/**
 * How deep a value a digest takes. `JSON.stringify` itself overflows the stack a few thousand
 * levels down (about 5,000 on Node 20), and so did the key sort: a deeper value is refused with
 * `invalid_argument` instead of a `RangeError` from somewhere inside.
 */
export const MAX_DIGEST_DEPTH = 1000;

/** JSON with object keys sorted at every depth, so equal values give equal bytes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, 1));
}

/** Whether a digest refuses `value` (nested deeper than `MAX_DIGEST_DEPTH`), found without recursion. */
export function tooDeepForDigest(value: unknown): boolean {
  return nestingDepth(value, MAX_DIGEST_DEPTH) > MAX_DIGEST_DEPTH;
}

/** Depth of a parsed JSON value, walked with an explicit stack (no recursion), stopping past `bound`. */
export function nestingDepth(value: unknown, bound: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) max = depth;
    if (max > bound) return max;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return max;
}

/** `value` with its keys sorted; `depth` is its own (1 at the top), checked in the same walk. */
function sortKeys(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DIGEST_DEPTH) {
    throw new TerminusError('invalid_argument', `value nests deeper than ${MAX_DIGEST_DEPTH} levels`);
  }
  if (Array.isArray(value)) return value.map((item: unknown) => sortKeys(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v, depth + 1);
  }
  return out;
}

/** sha256 hex of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** The request digest that binds a submission key to one request (S5). */
export function requestDigest(tool: string, args: Record<string, unknown>): string {
  return digestOf({ tool, args });
}
