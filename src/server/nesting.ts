import { nestingDepth } from '../core/digest.js';
import { TerminusError } from '../core/errors.js';
import type { TaskEngine } from '../runner/engine-port.js';
import { MAX_JSON_DEPTH } from './http/edge.js';

/**
 * Tool arguments nest at most `MAX_JSON_DEPTH` levels on every transport (issue 12 item 11). The
 * HTTP edge counts brackets in the raw body; stdio has no such edge, and 10,000 levels there
 * overflowed the stack in the request digest (`-32603`). This wrapper refuses deeper arguments with
 * `invalid_argument` (`-32602`, HTTP 400) before validation, digest or store see them.
 */
export function boundedNesting(engine: TaskEngine): TaskEngine {
  return {
    tools: engine.tools,
    events: engine.events,
    submit: async (command) => {
      checkDepth(command.args);
      return engine.submit(command);
    },
    runInline: async (command) => {
      checkDepth(command.args);
      return engine.runInline(command);
    },
    get: (owner, id) => engine.get(owner, id),
    cancel: (owner, id) => engine.cancel(owner, id),
    respond: (owner, id, responses) => {
      checkDepth(responses);
      return engine.respond(owner, id, responses);
    },
    list: (owner, query) => engine.list(owner, query),
    listAllOwners: (query) => engine.listAllOwners(query),
    lookupKey: (owner, key) => engine.lookupKey(owner, key),
    readLog: (owner, id, query) => engine.readLog(owner, id, query),
    readEvents: (owner, id, query) => engine.readEvents(owner, id, query),
    waitForChange: (owner, id, options) => engine.waitForChange(owner, id, options),
    start: () => engine.start(),
    stop: () => engine.stop(),
  };
}

function checkDepth(value: unknown): void {
  if (nestingDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new TerminusError('invalid_argument', `arguments nest deeper than ${MAX_JSON_DEPTH} levels`);
  }
}
