/** The pure codec of the 2025-11-25 wire, for tests and other adapters that want the same shapes. */
export { decodeList, decodeTaskRef, decodeToolCall } from './decode.js';
export { encodeCreateTaskResult, encodeList, encodePayload, encodeTask, projectStatus, ttlOf } from './encode.js';
export type { CreateTaskResult2025, ListTasksResult2025, Task2025, TaskPayload } from './encode.js';
