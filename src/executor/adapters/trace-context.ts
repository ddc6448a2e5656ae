import { context, trace, isSpanContextValid } from '@opentelemetry/api';

/**
 * W3C trace context of the active span, as `_meta` fields (`traceparent`, `tracestate`), so the
 * server's request span continues the caller's trace. Empty when no span is active (always, unless
 * the host registered an OpenTelemetry SDK and a context manager).
 */
export function traceMeta(): Record<string, string> {
  const span = trace.getSpanContext(context.active());
  if (span === undefined || !isSpanContextValid(span)) return {};
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  const state = span.traceState?.serialize();
  return {
    traceparent: `00-${span.traceId}-${span.spanId}-${flags}`,
    ...(state === undefined || state === '' ? {} : { tracestate: state }),
  };
}
