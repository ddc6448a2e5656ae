import { nestingDepth } from '../core/digest.js';
import { TerminusError } from '../core/errors.js';
import type { TaskEngine } from '../runner/engine-port.js';
import { MAX_JSON_DEPTH } from './http/edge.js';

/**
 * What every transport's requests must be before validation, the request digest or a store sees
 * them (issue 12 item 11, issue 30). Each check answers `invalid_argument` (`-32602`, HTTP 400)
 * naming the field, and nothing is stored:
 *
 * - Tool arguments and input responses nest at most `MAX_JSON_DEPTH` levels. The HTTP edge counts
 *   brackets in the raw body; stdio has no such edge, and 10,000 levels there overflowed the stack
 *   in the request digest (`-32603`).
 * - Every string in them, and a submission key, is well-formed Unicode. JSON lets a string escape a
 *   lone UTF-16 surrogate (`"\ud800"`), which no UTF-8 text can hold: PostgreSQL's `jsonb` refuses
 *   it (the create failed as an internal error) and a text column stores U+FFFD in its place (the
 *   stored key then differs from the one sent). Invalid UTF-8 bytes never get this far: the HTTP
 *   edge and the stdio reader refuse them as a parse error (`-32700`).
 */
export function checkedInput(engine: TaskEngine): TaskEngine {
  return {
    tools: engine.tools,
    events: engine.events,
    submit: async (command) => {
      checkValue(command.args, 'arguments');
      if (command.submissionKey !== undefined) checkText(command.submissionKey, 'the submission key');
      return engine.submit(command);
    },
    runInline: async (command) => {
      checkValue(command.args, 'arguments');
      return engine.runInline(command);
    },
    get: (owner, id) => engine.get(owner, id),
    cancel: (owner, id) => engine.cancel(owner, id),
    respond: (owner, id, responses) => {
      checkValue(responses, 'the input responses');
      return engine.respond(owner, id, responses);
    },
    list: (owner, query) => engine.list(owner, query),
    listAllOwners: (query) => engine.listAllOwners(query),
    lookupKey: (owner, key) => {
      checkText(key, 'the submission key');
      return engine.lookupKey(owner, key);
    },
    readLog: (owner, id, query) => engine.readLog(owner, id, query),
    readEvents: (owner, id, query) => engine.readEvents(owner, id, query),
    waitForChange: (owner, id, options) => engine.waitForChange(owner, id, options),
    start: () => engine.start(),
    stop: () => engine.stop(),
  };
}

function checkValue(value: unknown, field: string): void {
  if (nestingDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new TerminusError('invalid_argument', `${field} nest deeper than ${MAX_JSON_DEPTH} levels`);
  }
  const bad = illFormedPath(value, field);
  if (bad !== undefined) throw illFormed(bad);
}

function checkText(text: string, field: string): void {
  if (!isWellFormed(text)) throw illFormed(field);
}

function illFormed(where: string): TerminusError {
  return new TerminusError(
    'invalid_argument',
    `${where} is not valid Unicode: it holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair)`,
    { details: { field: where } },
  );
}

/** Where the first ill-formed string (a value or a key) is, as `arguments.rows[2].name`; undefined: none. */
function illFormedPath(value: unknown, root: string): string | undefined {
  // Iterative, like nestingDepth: the depth was bounded just before, but a wide value has no bound.
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (typeof node === 'string') {
      if (!isWellFormed(node)) return path;
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, item] of Object.entries(node)) {
        if (!isWellFormed(key)) return `a key in ${path}`;
        stack.push([item, `${path}.${key}`]);
      }
    }
  }
  return undefined;
}

/** `String.prototype.isWellFormed` (Node 20; the ES2024 lib is not in our `lib`). */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}
