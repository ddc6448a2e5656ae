/**
 * `mcp-terminus/testing`: for backend authors. The conformance suites a `TaskStore` or a `Ledger`
 * implementation runs to prove it keeps the contract (`describeTaskStore`, `describeLedger`), and
 * the record types of the `TaskStore` contract beyond the ones every server author sees (claims,
 * fences, finishes, log appends, cross-node events).
 *
 * The suites import `vitest` (describe/it/expect): install vitest as a devDependency to use them.
 * The types import nothing at run time.
 * @packageDocumentation
 * @module mcp-terminus/testing
 */
export { describeTaskStore } from './testing/task-store-suite.js';
export type { DescribeTaskStoreOptions } from './testing/context.js';
export { describeLedger } from './testing/ledger-suite.js';
export type {
  NewTask,
  NewTaskLease,
  TaskCount,
  ClaimRequest,
  ClaimedTask,
  Fence,
  FinishInput,
  FinishOutcome,
  LogQuery,
  LogRead,
} from './store/port.js';
export type { NewLogLine, LogBound, LogPage } from './core/log.js';
export { DEFAULT_EVENT_BOUND, type EventBound } from './core/task-events.js';
export type { MemoryTaskStoreOptions } from './store/memory/index.js';
export type { TaskEvents, TaskEvent, TaskEventKind } from './store/events.js';
export type { WebhookOutbox } from './store/outbox-port.js';
export type { WebhookEndpoint } from './core/webhook.js';
export type { EventQuery, EventRead } from './store/port.js';
export type { DeliveryRecord, DeliveryClaim, NextDelivery } from './store/outbox-port.js';
export type { Delivery, DeliveryAttempt, DeliveryState } from './core/webhook.js';
export type { OrderedEvent, NewOrderedEvent } from './core/task-events.js';
