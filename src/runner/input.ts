import { digestOf } from '../core/digest.js';
import { TerminusError } from '../core/errors.js';
import type { TaskRecord } from '../core/task.js';
import type { InputReply } from './tool.js';

/** What the broker needs from the run it belongs to. */
export interface InputPort {
  readonly signal: AbortSignal;
  /** Fenced `store.requestInput` (+ event); resolves with the task as stored. */
  request(key: string, requestedSchema: Record<string, unknown>, message: string): Promise<TaskRecord>;
}

/**
 * The key of the n-th `requestInput` of a run. Deterministic, so a re-run that asks the same
 * question at the same position finds the stored request and its reply (S9) instead of asking again;
 * the digest makes a different question at that position a different key.
 */
export function inputKey(n: number, requestedSchema: Record<string, unknown>, message: string): string {
  return `input-${n}-${digestOf({ message, requestedSchema }).slice(0, 12)}`;
}

/**
 * `requestInput` for one run: issues durable requests and hands each caller its reply as soon as a
 * fresher record shows it. Fresher records come from `observe`, which the run calls after every
 * heartbeat (another node's reply within one heartbeat) and on `input_received` events (at once).
 */
export class InputBroker {
  readonly #port: InputPort;
  #calls = 0;
  #responses: Readonly<Record<string, unknown>>;
  readonly #waiters = new Map<string, ((reply: unknown) => void)[]>();

  constructor(port: InputPort, initial: TaskRecord) {
    this.#port = port;
    this.#responses = initial.inputResponses;
  }

  /** Takes in a record read after the last one; resolves every waiter whose key is now answered. */
  observe(record: TaskRecord): void {
    this.#responses = record.inputResponses;
    for (const [key, waiters] of this.#waiters) {
      if (!Object.hasOwn(this.#responses, key)) continue;
      this.#waiters.delete(key);
      for (const resolve of waiters) resolve(this.#responses[key]);
    }
  }

  async request(requestedSchema: Record<string, unknown>, message: string): Promise<InputReply> {
    // Numbered before the first await, so concurrent calls are numbered in call order.
    const key = inputKey(this.#calls++, requestedSchema, message);
    this.#port.signal.throwIfAborted();
    if (Object.hasOwn(this.#responses, key)) return toInputReply(key, this.#responses[key]);
    const waiting = this.#wait(key);
    // An abort while the request is in flight rejects `waiting` before it is awaited below.
    waiting.catch(() => {});
    try {
      this.observe(await this.#port.request(key, requestedSchema, message));
    } catch (error) {
      this.#drop(key);
      throw error;
    }
    return toInputReply(key, await waiting);
  }

  #wait(key: string): Promise<unknown> {
    const signal = this.#port.signal;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#drop(key);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const list = this.#waiters.get(key) ?? [];
      list.push((reply) => {
        signal.removeEventListener('abort', onAbort);
        resolve(reply);
      });
      this.#waiters.set(key, list);
    });
  }

  #drop(key: string): void {
    this.#waiters.delete(key);
  }
}

/**
 * A stored response as the handler sees it: the MCP `ElicitResult`. The wires store what the client
 * sent; a value without a valid `action` is refused here rather than guessed at.
 */
export function toInputReply(key: string, value: unknown): InputReply {
  if (value !== null && typeof value === 'object') {
    const { action, content } = value as { action?: unknown; content?: unknown };
    if (action === 'accept' || action === 'decline' || action === 'cancel') {
      if (content !== null && typeof content === 'object' && !Array.isArray(content)) {
        return { action, content: content as Record<string, unknown> };
      }
      return { action };
    }
  }
  throw new TerminusError('invalid_argument', `Input response for ${key} is not an ElicitResult`, {
    details: { key },
  });
}
