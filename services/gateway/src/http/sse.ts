import { Readable } from "node:stream";

/** One Server-Sent Events message: an event with its id and JSON data, or a comment that keeps the line alive. */
export type SseMessage = { id: number | string; event: string; data: unknown } | { comment: string };

function encode(m: SseMessage): string {
  if ("comment" in m) return `: ${m.comment}\n\n`;
  // JSON has no raw newlines, so the data is always one `data:` line.
  return `id: ${m.id}\nevent: ${m.event}\ndata: ${JSON.stringify(m.data)}\n\n`;
}

/** Without news for this long, an event stream sends a comment (proxies keep it open) and reads again. */
export const SSE_HEARTBEAT_MS = 15_000;

/** The headers of an event stream: never cached, never buffered by a proxy on the way. */
export const SSE_HEADERS = {
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
};

/**
 * An event stream body: `retry` tells the browser's EventSource how soon to reconnect (with Last-Event-ID), then the
 * messages as they come. Destroying the stream (the caller hung up) ends the source's iteration.
 */
export function sseBody(messages: AsyncIterable<SseMessage>, retryMs = 2_000): Readable {
  async function* lines() {
    yield `retry: ${retryMs}\n\n`;
    for await (const m of messages) yield encode(m);
  }
  return Readable.from(lines(), { objectMode: false });
}

/** A run's Last-Event-ID is an event id: a non-negative integer. Anything else is ignored. */
export function lastEventIdOf(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text || !/^\d{1,15}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

export const wantsEventStream = (accept: string | undefined) => accept?.includes("text/event-stream") === true;
