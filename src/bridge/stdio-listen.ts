/**
 * The Tasks extension's task notifications over stdio. The SDK's stdio entry answers every
 * `subscriptions/listen` itself and drops `taskIds` from its acknowledgement, so the bridge's
 * stdio transport is wrapped (the public `Transport` interface): a listen request for task ids is
 * taken off the connection before the SDK sees it and served by `taskListen` (ack, then
 * `notifications/tasks` on each change, the listen request's id in `_meta`); the host ends it with
 * `notifications/cancelled` naming that request, as the 2026-07-28 core says. Everything else
 * passes through unchanged.
 */
import type { JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import type { Logger } from '../core/ports.js';
import { taskListen, type TaskListenDeps } from './task-listen.js';

type OnMessage = NonNullable<Transport['onmessage']>;

export class TaskListenTransport implements Transport {
  private readonly streams = new Map<string | number, () => void>();
  onmessage?: OnMessage;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(
    private readonly inner: Transport,
    private readonly deps: TaskListenDeps,
    private readonly logger: Logger,
  ) {
    inner.onmessage = (message, extra) => {
      if (this.intercepts(message)) return;
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => {
      this.stopAll();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  async close(): Promise<void> {
    this.stopAll();
    await this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /** Takes a listen for task ids, or the cancel of one, off the connection. */
  private intercepts(message: JSONRPCMessage): boolean {
    const raw = message as {
      id?: unknown;
      method?: unknown;
      params?: { requestId?: unknown; notifications?: unknown };
    };
    if (raw.method === 'notifications/cancelled' && raw.id === undefined) {
      const requestId = raw.params?.requestId;
      const stop =
        typeof requestId === 'string' || typeof requestId === 'number' ? this.streams.get(requestId) : undefined;
      if (stop === undefined) return false;
      stop();
      this.streams.delete(requestId as string | number);
      return true;
    }
    const notifications = raw.params?.notifications;
    const asksTasks =
      raw.method === 'subscriptions/listen' &&
      (typeof raw.id === 'string' || typeof raw.id === 'number') &&
      typeof notifications === 'object' &&
      notifications !== null &&
      'taskIds' in notifications;
    if (!asksTasks) return false;
    const id = raw.id as string | number;
    void taskListen(message, 'stdio', this.deps).then(
      async (listen) => {
        if (listen === undefined) return;
        if (listen.kind === 'refused') {
          await this.inner.send({ jsonrpc: '2.0', id, error: listen.error } as JSONRPCMessage);
          return;
        }
        this.streams.get(id)?.();
        this.streams.set(
          id,
          listen.start((msg) => {
            this.inner.send(msg as JSONRPCMessage).catch(() => undefined);
          }),
        );
      },
      (error: unknown) => this.logger.warn('task listen failed', { error: String(error) }),
    );
    return true;
  }

  private stopAll(): void {
    for (const stop of this.streams.values()) stop();
    this.streams.clear();
  }
}
