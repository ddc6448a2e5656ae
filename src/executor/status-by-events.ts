/**
 * A status read by the task's ordered events (issue 32), where the server serves them: the driver
 * reads the events after the cursor its record holds and folds them into what a status read would
 * say (the last status, the last progress, the input requests still open, a completion's result
 * digest). The step that applies the fold writes the new cursor with it (`eventCursor`), so each
 * event is applied once: a crash, a broken stream or a detach reads on from the last applied one.
 *
 * The status read stays where events say nothing the machine can act on alone: a server that does
 * not serve events (`unsupported`: not ours), or stopped serving this task's (`not_found` while the
 * task is there, a refused cursor), is followed by status reads from then on (`eventsOff`, kept on
 * the record); an input round on a wire whose replies do not answer the events' keys (2025-11-25)
 * is read with `getStatus`. A transient failure is thrown as a status read's is (retried, C6).
 */
import type { EventCursor, ToolOperation } from './operation.js';
import type { TokenBucket } from './token-bucket.js';
import { WireFailure, type ClientWire, type EventPage, type TaskSnapshot } from './wire-port.js';

/** Events per page; a read that is behind reads on at once, up to `MAX_PAGES` pages. */
export const STATUS_EVENT_PAGE = 500;
const MAX_PAGES = 8;

/** What one status read found, by events or by `getStatus`. */
export interface StatusRead {
  readonly snapshot: TaskSnapshot;
  /** A completion's result digest, from its status event (C13). */
  readonly resultDigest?: string;
  /** Where the applied read leaves the cursor. */
  readonly eventCursor?: EventCursor;
  /** The server does not serve this task's events: status reads from now on. */
  readonly eventsOff?: true;
}

/** Whether the record's task is followed by its events on this wire. */
export function readsEvents(wire: ClientWire, record: ToolOperation): boolean {
  return wire.events !== undefined && record.eventsOff !== true;
}

/**
 * One status read of `taskId`: by events when `readsEvents`, else `getStatus`. The caller took the
 * read's token already; each further page takes one more of `bucket` (C6).
 */
export async function readStatus(
  wire: ClientWire,
  record: ToolOperation,
  taskId: string,
  bucket: TokenBucket,
  signal: AbortSignal,
  follow = true,
): Promise<StatusRead> {
  if (!follow || !readsEvents(wire, record)) return { snapshot: await wire.getStatus(taskId, signal) };
  // A status read after an events read is a second request: its own token (C6).
  const statusRead = async (): Promise<TaskSnapshot> => {
    await bucket.take(signal);
    return wire.getStatus(taskId, signal);
  };
  const from = record.eventCursor ?? null;
  const pages: EventPage[] = [];
  let cursor = from?.cursor;
  for (let n = 0; n < MAX_PAGES; n++) {
    if (n > 0) await bucket.take(signal);
    let answer;
    try {
      answer = await wire.events!(
        taskId,
        { ...(cursor === undefined ? {} : { cursor }), limit: STATUS_EVENT_PAGE },
        signal,
      );
    } catch (error) {
      if (!(error instanceof WireFailure) || (error.kind !== 'not_found' && error.kind !== 'rejected')) throw error;
      // The task may be there and only its events gone: the status read tells (its not_found is the task's).
      return { snapshot: await statusRead(), eventsOff: true };
    }
    if (answer.kind === 'unsupported') return { snapshot: await statusRead(), eventsOff: true };
    const { kind: _kind, ...page } = answer;
    pages.push(page);
    cursor = page.cursor;
    // The last event read, not the cursor's position (see `foldEvents`): a full page's cursor stands
    // at its last event, so only a short page (the loop's end anyway) can stand past it.
    const last = page.events.at(-1)?.seq ?? 0;
    if (page.done || page.events.length < STATUS_EVENT_PAGE || last >= page.lastSeq) break;
  }
  const fold = foldEvents(pages, record, from);
  if (fold.snapshot.status === 'input_required' && (wire.answersEventInput !== true || fold.open === 0)) {
    // The round's requests come with the wire's own status read (its side channel, or requests
    // asked before the cursor): read it, and still move the cursor past what was folded.
    const snapshot = await statusRead();
    return { snapshot, ...(fold.eventCursor === undefined ? {} : { eventCursor: fold.eventCursor }) };
  }
  const { open: _open, ...read } = fold;
  return read;
}

/**
 * The pages (in order) as one status answer. Status, status message and progress are the last ones
 * the events name (the record's own when they name none); the open input requests are those asked
 * after the cursor and not answered since. A request whose status event is not read yet (the page
 * ended between the two) holds the cursor before it, so the next read takes both.
 */
export function foldEvents(
  pages: readonly EventPage[],
  record: ToolOperation,
  from: EventCursor | null,
): StatusRead & { readonly open: number } {
  const first = pages[0]!;
  let status = record.lastServerStatus ?? first.status;
  let statusMessage: string | undefined;
  let progress: TaskSnapshot['progress'];
  let resultDigest: string | undefined;
  const open = new Map<string, { seq: number; request: Readonly<Record<string, unknown>> }>();
  let cursor: EventCursor | undefined;
  for (const page of pages) {
    for (const event of page.events) {
      switch (event.kind) {
        case 'status':
          status = event.status;
          statusMessage = event.statusMessage ?? undefined;
          resultDigest = event.resultDigest;
          break;
        case 'progress':
          progress = event.progress;
          break;
        case 'input_requested':
          open.set(event.key, { seq: event.seq, request: event.request });
          break;
        case 'input_answered':
          for (const key of event.keys) open.delete(key);
          break;
        case 'log':
          break;
      }
    }
    // The cursor is the page's own (the read goes on from where the server says it stands); `seq` is
    // the last event applied, which can trail it. Our server's cursor stands past a page's last event
    // only over seqs with no event to read: a short page stands at `lastSeq`, whose event the bound
    // always keeps (`maxKept` >= 1), unless an append trimmed it between the task row and the events
    // (PostgreSQL, or another process on the SQLite file). Such seqs are dropped progress and log
    // events (status and input events are never dropped), gone for every later read too, so reading
    // from either position applies the same events. Where `seq` is used the position comes out the
    // same: an open request lies past the position read from, so `before` below is at or past it (at
    // it, the moved cursor is `from`'s own); the never-back check (`onStatusObserved`) compares seqs
    // made this same way, after `pollCursor` dropped reordered answers. An empty page leaves the
    // cursor where it was: it applied nothing, and nothing is left to read in the seqs it passed.
    // A foreign server's cursor is opaque: the last event's seq is the only position known.
    const last = page.events.at(-1);
    if (last !== undefined) cursor = { cursor: page.cursor, seq: last.seq };
  }
  if (status !== 'input_required' && open.size > 0 && cursor !== undefined) {
    const before = Math.min(...[...open.values()].map((o) => o.seq)) - 1;
    const base = from ?? { cursor: undefined, seq: 0 };
    const moved = cursorAt(cursor.cursor, before);
    cursor = before <= base.seq || moved === null ? (from ?? undefined) : { cursor: moved, seq: before };
  }
  const pollIntervalMs = pages.at(-1)?.pollIntervalMs;
  const snapshot: TaskSnapshot = {
    taskId: first.taskId,
    status,
    ...(statusMessage === undefined ? {} : { statusMessage }),
    ...(progress === undefined ? {} : { progress }),
    ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
    ...(status === 'input_required' && open.size > 0
      ? { inputRequests: Object.fromEntries([...open].map(([key, o]) => [key, o.request])) }
      : {}),
  };
  return {
    snapshot,
    open: open.size,
    ...(status === 'completed' && resultDigest !== undefined ? { resultDigest } : {}),
    ...(cursor === undefined ? {} : { eventCursor: cursor }),
  };
}

/** Our cursor `<seq>.<tag>` moved to another seq of the same task (the tag is the task's); null for another form. */
export function cursorAt(cursor: string, seq: number): string | null {
  const match = /^\d+(\..+)$/.exec(cursor);
  return match === null ? null : `${seq}${match[1]}`;
}
