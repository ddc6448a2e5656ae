import { TerminusError } from '../core/errors.js';
import type { TaskEngine } from '../runner/engine-port.js';
import { ANONYMOUS_OWNER } from './owner.js';

/**
 * Anonymous callers hold capabilities, never a namespace (docs/operations.md, "Identity and anonymous callers").
 * Every unauthenticated caller of a session-less HTTP wire (Tasks extension, AIP-151, the stateless
 * 2025 leg with SEP-1391) is the one owner `anonymous`, so whatever names a task there must be
 * unguessable: task ids are 128 random bits already; this makes submission keys (the Tasks
 * extension's `_meta` key, AIP-155 `requestId`, SEP-1391 `operation.token`) carry at least
 * `MIN_ANONYMOUS_KEY_BITS` too, and answers every list with an empty page (and a page token, which no
 * anonymous list ever handed out, with `invalid_argument`). One wrapper around the
 * engine, so every wire gets the same policy; session, stdio and authenticated owners pass through.
 */

/** The bits of entropy an anonymous submission key must show (X-55's bar for task ids). */
export const MIN_ANONYMOUS_KEY_BITS = 128;

/**
 * A random key of 39 digits, 32 hex digits or 22 base64url characters shows at least this many
 * distinct characters with probability above 1 - 1e-9; `job-1job-1job-1...` shows 5.
 */
const MIN_DISTINCT_CHARACTERS = 6;

/**
 * The entropy a key's form can hold, in bits: its length times the bits per character of the
 * narrowest alphabet it uses: decimal digits 3.32, hex digits 4 (hyphens between digits count
 * nothing), anything else 6 (base64url; wider alphabets are not credited more). A key repeating a few
 * characters counts 0. The server cannot see how a key was made: this refuses what is guessable
 * by its form; only a cryptographic random source makes a key unguessable.
 * @example keyBits('job-1') // 0 (5 distinct characters)
 * @example keyBits(randomBytes(16).toString('base64url')) // 132
 */
export function keyBits(key: string): number {
  if (new Set(key.replaceAll('-', '')).size < MIN_DISTINCT_CHARACTERS) return 0;
  // Hyphens separate groups of digits (a UUID's 32 hex digits count 128); elsewhere, as in
  // base64url, a hyphen is a character like any other.
  const digits = key.replaceAll('-', '');
  if (/^[0-9]+$/.test(digits)) return digits.length * Math.log2(10);
  if (/^[0-9a-fA-F]+$/.test(digits)) return digits.length * 4;
  return key.length * 6;
}

/** Throws `submission_key_too_weak` (every wire: `-32602` / HTTP 400) for a guessable anonymous key. */
export function checkAnonymousKey(owner: string, key: string): void {
  if (owner !== ANONYMOUS_OWNER) return;
  const bits = keyBits(key);
  if (bits >= MIN_ANONYMOUS_KEY_BITS) return;
  throw new TerminusError(
    'submission_key_too_weak',
    `Submission key too weak for an unauthenticated caller: it shows ${Math.floor(bits)} bits, at least ` +
      `${MIN_ANONYMOUS_KEY_BITS} are needed (e.g. 16 random bytes as 22 base64url or 32 hex characters); ` +
      `or authenticate, and keys are yours alone`,
    { details: { bits: Math.floor(bits), minBits: MIN_ANONYMOUS_KEY_BITS } },
  );
}

/**
 * The engine as anonymous callers may use it: keyed submissions and key lookups need a strong key
 * (checked before anything is written or burned), and a list is always empty (nobody can tell
 * anonymous callers apart, so a list would show each the others' tasks). Ids keep working: they are
 * the capabilities.
 */
export function anonymousCapabilities(engine: TaskEngine): TaskEngine {
  return {
    tools: engine.tools,
    events: engine.events,
    submit: async (command) => {
      if (command.submissionKey !== undefined) checkAnonymousKey(command.owner, command.submissionKey);
      return engine.submit(command);
    },
    runInline: (command) => engine.runInline(command),
    get: (owner, id) => engine.get(owner, id),
    cancel: (owner, id) => engine.cancel(owner, id),
    respond: (owner, id, responses) => engine.respond(owner, id, responses),
    list: (owner, query) => {
      if (owner !== ANONYMOUS_OWNER) return engine.list(owner, query);
      // No anonymous page ever had a next cursor, so every cursor here is junk or forged: refused as
      // a malformed one is for anyone else, before and without any read (S8: it names nothing).
      if (query.cursor !== undefined) return Promise.reject(new TerminusError('invalid_argument', 'malformed cursor'));
      return Promise.resolve({ tasks: [], nextCursor: null });
    },
    // No caller in it: only an operator's view (the console) calls this, after its own role check.
    listAllOwners: (query) => engine.listAllOwners(query),
    lookupKey: async (owner, key) => {
      checkAnonymousKey(owner, key);
      return engine.lookupKey(owner, key);
    },
    readLog: (owner, id, query) => engine.readLog(owner, id, query),
    readEvents: (owner, id, query) => engine.readEvents(owner, id, query),
    waitForChange: (owner, id, options) => engine.waitForChange(owner, id, options),
    start: () => engine.start(),
    stop: () => engine.stop(),
  };
}
