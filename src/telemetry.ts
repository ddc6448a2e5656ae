/**
 * `mcp-terminus/telemetry`: running it in production. The engine's lifecycle events and the
 * observers that turn them into logs (`lifecycleLog`), metrics (`createMetrics`, `taskGauge`,
 * `executorMetrics`, with prom-client) and traces (`taskTracing`, `executorTracing`, with
 * `@opentelemetry/api`), the HTTP request instrument, the readiness probe, and the operations
 * routes (`/metrics`, `/healthz`, `/readyz`, the console) for `serveHttp`'s `routes`.
 * @packageDocumentation
 * @module mcp-terminus/telemetry
 */
export { combineObservers, silentObserver, withinRun } from './runner/observer.js';
export type { LifecycleEvent, LifecycleKind, RunOutcome, RunScope, TaskObserver } from './runner/observer.js';
export { lifecycleLog, lineLogger, LOG_FORMATS } from './telemetry/log.js';
export type { LifecycleLogOptions, LineLoggerOptions, LogFormat } from './telemetry/log.js';
export { createMetrics } from './telemetry/metrics.js';
export type { RequestLabels, TerminusMetrics } from './telemetry/metrics.js';
export { taskGauge } from './telemetry/task-gauge.js';
export type { TaskGaugeOptions } from './telemetry/task-gauge.js';
export { taskSpanContext, taskTracing, TRACER_NAME } from './telemetry/trace.js';
export { AsyncContextManager } from './telemetry/context.js';
export { requestInstrument } from './telemetry/http.js';
export type { RequestFacts, RequestInstrument } from './telemetry/http.js';
export { readinessProbe } from './telemetry/health.js';
export type { Readiness, ReadinessOptions, ReadinessProbe } from './telemetry/health.js';
export { timedStore } from './telemetry/store.js';
export { executorMetrics } from './telemetry/executor.js';
export type { ExecutorMetrics } from './telemetry/executor.js';
export { executorTracing } from './telemetry/executor-trace.js';
export type { ExecutorTracing } from './telemetry/executor-trace.js';
export { operationsRoutes } from './server/http/ops-routes.js';
