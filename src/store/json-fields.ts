import { TerminusError } from '../core/errors.js';

/**
 * A task's arguments, checkpoint and result are values its caller and its handler chose, up to
 * megabytes, while most reads of a task never look at them: a status poll, a list, a cancel. So a
 * stored text longer than `EAGER_JSON_CHARS` is parsed when the property is first read (and the
 * value kept), not on every read of the row; shorter text is parsed at once, as the rest of the
 * row. The property stays an own, enumerable one: a spread, `JSON.stringify` or a structured
 * clone reads it like any other. test/store/json-fields.test.ts shows a poll parsing nothing large.
 */
export const EAGER_JSON_CHARS = 4096;

/** Stored JSON text parsed, NULL as null: the small JSON columns of a task row, on either store. */
export function parseJsonOrNull<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** The task fields whose stored JSON may be parsed on first read. */
export type JsonField = 'args' | 'checkpoint' | 'result';

/** Sets `record[field]` from its stored JSON text (null stays null), parsed now or on first read. */
export function setJsonField(record: object, field: JsonField, text: string | null, taskId: string): void {
  const target = record as Record<JsonField, unknown>;
  if (text === null || text.length <= EAGER_JSON_CHARS) {
    target[field] = text === null ? null : JSON.parse(text);
    return;
  }
  const settle = (value: unknown): unknown => {
    Object.defineProperty(record, field, { value, enumerable: true, configurable: true, writable: true });
    return value;
  };
  Object.defineProperty(record, field, {
    enumerable: true,
    configurable: true,
    get: () => settle(parseStored(text, field, taskId)),
    set: settle,
  });
}

function parseStored(text: string, field: JsonField, taskId: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TerminusError('internal', `the stored ${field} of task ${taskId} is not valid JSON`, { cause: error });
  }
}
