import { createHash } from 'node:crypto';
import { TerminusError } from './errors.js';

/**
 * The cursor of a task's ordered events (issue 32): `<seq>.<tag>`, the seq of the last event the
 * reader has and a tag of the task it belongs to (10 base64url characters of sha256 of the task
 * id). Opaque to clients; the tag lets a read refuse a cursor of another task instead of quietly
 * skipping events, and the form is short enough to log. Not a secret and not signed: a cursor
 * only says where a reader stands in a task it can already read.
 */
const CURSOR = /^(\d{1,15})\.([A-Za-z0-9_-]{10})$/;

/**
 * The tags of the tasks read lately: every `tasks/get` carries its task's cursor in `_meta`, and a
 * sha256 per read was 2 % of a stdio `tasks/get` (docs/benchmarks.md, figure 8). Bounded: emptied
 * when full, so a server reading many tasks holds at most `TAGS_HELD` of them.
 */
const tags = new Map<string, string>();
const TAGS_HELD = 4096;

function tagOf(taskId: string): string {
  let tag = tags.get(taskId);
  if (tag === undefined) {
    tag = createHash('sha256').update(taskId).digest('base64url').slice(0, 10);
    if (tags.size >= TAGS_HELD) tags.clear();
    tags.set(taskId, tag);
  }
  return tag;
}

/** The cursor that stands after event `seq` of task `taskId` (`seq` 0: before the first). */
export function encodeEventCursor(taskId: string, seq: number): string {
  return `${seq}.${tagOf(taskId)}`;
}

/** A cursor as decoded; `belongsTo` checks it against the task it is used on. */
export interface EventCursor {
  readonly seq: number;
  belongsTo(taskId: string): boolean;
}

/** Rejects `invalid_argument` (field `cursor`) for anything `encodeEventCursor` did not make. */
export function decodeEventCursor(cursor: string): EventCursor {
  const match = CURSOR.exec(cursor);
  const seq = Number(match?.[1]);
  if (match === null || !Number.isSafeInteger(seq)) {
    throw new TerminusError(
      'invalid_argument',
      `cursor ${JSON.stringify(cursor.slice(0, 40))} is malformed: pass the cursor of an earlier events read (or of _meta), or none to start from the first event`,
      { details: { field: 'cursor' } },
    );
  }
  const tag = match[2];
  return { seq, belongsTo: (taskId) => tagOf(taskId) === tag };
}
