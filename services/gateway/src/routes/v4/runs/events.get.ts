import { type runs, SESSION_CHANGE_KINDS } from "@bas/proto";
import { openPushStream } from "../../../app/push-stream";
import { defineRoute } from "../../../http/route";
import { lastEventIdOf, SSE_HEADERS, SSE_HEARTBEAT_MS, sseBody, wantsEventStream } from "../../../http/sse";
import { IdParams } from "../../../schemas/common";
import { RunEventsQuery, RunEventsResponse } from "./run-schemas";

const toRunEvent = (e: runs.RunEvent) => ({
  runId: e.runId,
  id: e.id,
  ts: (e.ts ?? new Date(0)).toISOString(),
  type: e.type,
  data: e.data ?? {},
});

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
    const read = async (after: number) => {
      const page = await deps.runs.listRunEvents({ ...ref, after, limit: query.limit }, { signal });
      return { items: page.events, hasMore: page.hasMore, complete: page.complete };
    };
    const items = await openPushStream({
      watch: deps.changeNotices.watch(SESSION_CHANGE_KINDS.runs, sessionId),
      cursor: lastEventIdOf(headers["last-event-id"]) ?? query.after,
      cursorOf: (e: runs.RunEvent) => e.id,
      read,
      signal,
      heartbeatMs: SSE_HEARTBEAT_MS,
    });
    async function* messages() {
      for await (const pushed of items) {
        if ("heartbeat" in pushed) yield { comment: "still running" };
        else yield { id: pushed.item.id, event: pushed.item.type, data: toRunEvent(pushed.item) };
      }
    }
    return { body: sseBody(messages()), type: "text/event-stream", headers: SSE_HEADERS };
  },
});
