/**
 * The `input_required` side channel of 2025-11-25 tasks (reference 1.11), client side. When a poll
 * sees `input_required`, one `tasks/result` is kept open for the task (T-52); the server sends its
 * `elicitation/create` / `sampling/createMessage` requests, tagged with the related-task `_meta`
 * (T-43), while that call blocks, and they wait here, keyed by their JSON-RPC id, until `answer`
 * replies to them. An id answered once is never answered again: a replayed reply is a no-op.
 *
 * The blocked `tasks/result` ends with the task's final answer. A successful one is kept for the
 * interpreter's own fetch (`takeFinal`), which decodes and verifies it like any other (C2), and is
 * the task's first terminal report until then (`final`); it never settles the operation by itself.
 * An error answer is not kept: the fetch asks again.
 */
import type { RpcChannel } from '../../wire-port.js';
import { WireFailure } from '../../wire-port.js';
import type { ServerRequest, ServerRequestReply } from '../connection.js';
import { RELATED_TASK_META } from '../envelope.js';
import { isRecord } from '../rpc-error.js';

/** Server requests an input round may carry. */
const INPUT_METHODS: readonly string[] = ['elicitation/create', 'sampling/createMessage'];

interface Pending {
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly reply: ServerRequestReply;
  /** The answer being written: a second `answer` of the key waits on it instead of writing again. */
  sending?: Promise<void>;
}

interface TaskInput {
  readonly pending: Map<string, Pending>;
  readonly answered: Set<string>;
  /** Aborts the open `tasks/result`; null when none is open. */
  call: AbortController | null;
  /** The successful answer of the blocked `tasks/result`, kept for the next fetch of the task. */
  final: Record<string, unknown> | null;
}

export class SideChannel {
  readonly #channel: RpcChannel;
  readonly #tasks = new Map<string, TaskInput>();
  readonly #onFinal: (taskId: string, final: Record<string, unknown>) => void;

  /** `onFinal`: told of each final answer as it is kept. */
  constructor(channel: RpcChannel, onFinal: (taskId: string, final: Record<string, unknown>) => void = () => {}) {
    this.#channel = channel;
    this.#onFinal = onFinal;
  }

  /**
   * The channel's request hook: takes an input request tagged with a task, answers nothing yet.
   * Untagged requests (and other methods) are left to the channel, which refuses them.
   */
  readonly accept = (request: ServerRequest, reply: ServerRequestReply): boolean => {
    if (!INPUT_METHODS.includes(request.method)) return false;
    const taskId = relatedTaskOf(request.params);
    if (taskId === undefined) return false;
    const task = this.#task(taskId);
    const key = String(request.id);
    // The same id delivered again (a second stream) is the same question: keep the first.
    if (task.answered.has(key) || task.pending.has(key)) return true;
    task.pending.set(key, { method: request.method, params: withoutRelatedTask(request.params), reply });
    return true;
  };

  /** Opens a `tasks/result` for the task unless one is open or its answer is already here (T-52). */
  open(taskId: string, signal?: AbortSignal): void {
    const task = this.#task(taskId);
    if (task.call !== null || task.final !== null || signal?.aborted === true) return;
    const call = new AbortController();
    task.call = call;
    const onAbort = (): void => call.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    this.#channel('tasks/result', { taskId }, { signal: call.signal })
      .then(
        (result) => this.#settle(taskId, call, result),
        () => {
          // Lost, timed out, aborted, or an error answer: only the interpreter's own fetch reads an
          // error (it may be about the call, or transient), so nothing is kept; the next
          // `input_required` opens another call.
          if (task.call === call) task.call = null;
        },
      )
      .finally(() => signal?.removeEventListener('abort', onAbort));
  }

  /** The task's unanswered input requests by key (`{ method, params }`), or undefined when there is none. */
  requests(taskId: string): Readonly<Record<string, unknown>> | undefined {
    const task = this.#tasks.get(taskId);
    if (task === undefined || task.pending.size === 0) return undefined;
    const out: Record<string, unknown> = {};
    for (const [key, p] of task.pending) out[key] = { method: p.method, params: p.params };
    return out;
  }

  /**
   * Answers the pending requests named in `responses`. A key answered before is skipped (replay);
   * a key never seen here was asked on an earlier connection, whose request cannot be answered any
   * more, and is skipped too (the server asks again under a new id). A write that fails rejects and
   * leaves the key pending, so the retry writes it.
   */
  async answer(taskId: string, responses: Readonly<Record<string, unknown>>): Promise<void> {
    const task = this.#tasks.get(taskId);
    if (task === undefined) return;
    const writes: Promise<void>[] = [];
    for (const [key, response] of Object.entries(responses)) {
      const pending = task.pending.get(key);
      if (pending === undefined) continue;
      pending.sending ??= this.#write(taskId, pending, response).then(
        () => {
          task.pending.delete(key);
          task.answered.add(key);
        },
        (error: unknown) => {
          delete pending.sending;
          throw error;
        },
      );
      writes.push(pending.sending);
    }
    await Promise.all(writes);
  }

  /** The final answer the blocked call received, kept for the fetch; undefined before it came. */
  final(taskId: string): Record<string, unknown> | undefined {
    return this.#tasks.get(taskId)?.final ?? undefined;
  }

  /** Hands over the final answer the blocked call received (once), and forgets the task. */
  takeFinal(taskId: string): Record<string, unknown> | undefined {
    const task = this.#tasks.get(taskId);
    if (task === undefined) return undefined;
    this.#tasks.delete(taskId);
    task.call?.abort();
    return task.final ?? undefined;
  }

  close(): void {
    for (const task of this.#tasks.values()) task.call?.abort();
    this.#tasks.clear();
  }

  #task(taskId: string): TaskInput {
    let task = this.#tasks.get(taskId);
    if (task === undefined) {
      task = { pending: new Map(), answered: new Set(), call: null, final: null };
      this.#tasks.set(taskId, task);
    }
    return task;
  }

  #settle(taskId: string, call: AbortController, final: Record<string, unknown>): void {
    const task = this.#tasks.get(taskId);
    if (task?.call !== call) return;
    task.call = null;
    task.final = final;
    // The task is terminal: whatever it still asked can no longer matter.
    task.pending.clear();
    this.#onFinal(taskId, final);
  }

  #write(taskId: string, pending: Pending, response: unknown): Promise<void> {
    if (!isRecord(response)) {
      return Promise.reject(new WireFailure('rejected', 'an input reply must be a JSON object'));
    }
    // T-42: the answer to a task's request carries the task's related-task tag too.
    const meta = isRecord(response._meta) ? response._meta : {};
    return pending.reply.result({ ...response, _meta: { ...meta, [RELATED_TASK_META]: { taskId } } });
  }
}

function relatedTaskOf(params: Record<string, unknown>): string | undefined {
  const meta = isRecord(params._meta) ? params._meta[RELATED_TASK_META] : undefined;
  return isRecord(meta) && typeof meta.taskId === 'string' && meta.taskId !== '' ? meta.taskId : undefined;
}

function withoutRelatedTask(params: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(params._meta) || !(RELATED_TASK_META in params._meta)) return params;
  const { [RELATED_TASK_META]: _tag, ...meta } = params._meta;
  const { _meta: _old, ...rest } = params;
  return Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta };
}
