import { type Attributes, context, propagation, SpanStatusCode, trace } from "@opentelemetry/api";

/**
 * Trace context across NATS: a message that continues work elsewhere carries the W3C `traceparent` of the span
 * that sent it, and the work it starts is a child of that span. Without a started SDK every call here is a no-op
 * (the API's defaults), so nothing costs anything unless tracing is on.
 */

/** The active span's `traceparent`, or undefined when nothing is being traced. */
export function activeTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

export interface SpanOptions {
  attributes?: Attributes;
  /** Continue this trace (from a message) instead of the active one. */
  traceparent?: string;
}

/** Runs `fn` as a span: a child of `traceparent` when given, else of the active span. Errors mark the span. */
export function inSpan<T>(name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  const parent = options.traceparent
    ? propagation.extract(context.active(), { traceparent: options.traceparent })
    : context.active();
  return trace.getTracer("bas").startActiveSpan(name, { attributes: options.attributes }, parent, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}
