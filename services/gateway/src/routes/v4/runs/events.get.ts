import type { runs } from "@bas/proto";
import { runEventStream } from "../../../app/run-event-stream";
import { defineRoute } from "../../../http/route";
import { lastEventIdOf, SSE_HEADERS, sseBody, wantsEventStream } from "../../../http/sse";
import { IdParams } from "../../../schemas/common";
import { RunEventsQuery, RunEventsResponse } from "./run-schemas";

const toRunEvent = (e: runs.RunEvent) => ({
  runId: e.runId,
  id: e.id,
  ts: (e.ts ?? new Date(0)).toISOString(),
  type: e.type,
  data: e.data ?? {},
});

/** Without news for this long, an event stream sends a comment (proxies keep it open) and reads again. */
const HEARTBEAT_MS = 15_000;

export const route = defineRoute({
  method: "get",
  path: "/api/v4/runs/{id}/events",
  auth: "api-key",
  operationId: "getRunEvents",
  summary:
    "A run's lifecycle and step events in order, after a given event id. With `Accept: text/event-stream`: the " +
    "same events pushed as Server-Sent Events as they happen (id = event id, event = type, data = the event), " +
    "resumable with Last-Event-ID, ending after the run's last event.",
  tags: ["Runs"],
  request: { params: IdParams, query: RunEventsQuery },
  responses: {
    200: { description: "One page of events; pass nextAfter as after for the next", schema: RunEventsResponse },
  },
  errors: [404],
  async handler({ params, query, project, signal, headers }, deps) {
    const ref = { projectId: project.projectId, runId: params.id };
    if (!wantsEventStream(headers.accept)) {
      const page = await deps.runs.listRunEvents({ ...ref, after: query.after, limit: query.limit }, { signal });
      return {
        body: { events: page.events.map(toRunEvent), nextAfter: page.nextAfter, hasMore: page.hasMore },
      };
    }
    const { sessionId } = await deps.runs.getRun(ref, { signal });
    const watch = deps.changeNotices.watch(sessionId);
    const seen = watch.count;
    const read = (after: number) => deps.runs.listRunEvents({ ...ref, after, limit: query.limit }, { signal });
    let first: runs.ListRunEventsResponse;
    try {
      first = await read(lastEventIdOf(headers["last-event-id"]) ?? query.after);
    } catch (err) {
      watch.stop();
      throw err;
    }
    const items = runEventStream({ first, page: read, watch, seen, signal, heartbeatMs: HEARTBEAT_MS });
    async function* messages() {
      for await (const item of items) {
        if ("heartbeat" in item) yield { comment: "still running" };
        else yield { id: item.event.id, event: item.event.type, data: toRunEvent(item.event) };
      }
    }
    return { body: sseBody(messages()), type: "text/event-stream", headers: SSE_HEADERS };
  },
});
