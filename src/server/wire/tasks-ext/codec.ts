/** The pure codec of the wire, for tests and other adapters that want the same shapes. */
export { decodeLookup, decodeTaskRef, decodeToolCall, decodeUpdate } from './decode.js';
export {
  encodeAck,
  encodeCreateTaskResult,
  encodeDetailedTask,
  encodeGetTaskResult,
  encodeInlinedResult,
  encodeLookupFound,
  encodeLookupNeverCreated,
  encodeTask,
} from './encode.js';
export type { CreateTaskResult, DetailedTask, GetTaskResult, LookupResult, WireTask } from './encode.js';
