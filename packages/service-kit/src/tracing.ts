import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

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

/** What a traced function may add to its span once it knows more (the tokens a model call used). */
export interface SpanAttributes {
  setAttributes(attributes: Attributes): void;
}

function parentOf(options: SpanOptions): Context {
  return options.traceparent
    ? propagation.extract(context.active(), { traceparent: options.traceparent })
    : context.active();
}

function markFailed(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
}

/** Runs `fn` as a span: a child of `traceparent` when given, else of the active span. Errors mark the span. */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: SpanAttributes) => Promise<T>): Promise<T> {
  return trace
    .getTracer("bas")
    .startActiveSpan(name, { attributes: options.attributes }, parentOf(options), async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        markFailed(span, err);
        throw err;
      } finally {
        span.end();
      }
    });
}

/** A span the caller ends: for work that is not one function call (one span per item of a batch). */
export interface OpenSpan {
  end(attributes?: Attributes): void;
  /** Ends the span marked as failed with `err`. */
  fail(err: unknown): void;
}

/** Starts a span now, a child of `traceparent` when given, else of the active span; it is not made active. */
export function openSpan(name: string, options: SpanOptions): OpenSpan {
  const span = trace.getTracer("bas").startSpan(name, { attributes: options.attributes }, parentOf(options));
  return {
    end(attributes) {
      if (attributes) span.setAttributes(attributes);
      span.end();
    },
    fail(err) {
      markFailed(span, err);
      span.end();
    },
  };
}
