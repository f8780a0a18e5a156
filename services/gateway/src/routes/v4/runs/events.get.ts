import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import { RunEventsQuery, RunEventsResponse } from "./run-schemas";

export const route = defineRoute({
  method: "get",
  path: "/api/v4/runs/{id}/events",
  auth: "api-key",
  operationId: "getRunEvents",
  summary: "A run's lifecycle and step events in order, after a given event id",
  tags: ["Runs"],
  request: { params: IdParams, query: RunEventsQuery },
  responses: {
    200: { description: "One page of events; pass nextAfter as after for the next", schema: RunEventsResponse },
  },
  errors: [404],
  async handler({ params, query, project, signal }, deps) {
    const page = await deps.runs.listRunEvents(
      { projectId: project.projectId, runId: params.id, after: query.after, limit: query.limit },
      { signal },
    );
    return {
      body: {
        events: page.events.map((e) => ({
          runId: e.runId,
          id: e.id,
          ts: (e.ts ?? new Date(0)).toISOString(),
          type: e.type,
          data: e.data ?? {},
        })),
        nextAfter: page.nextAfter,
        hasMore: page.hasMore,
      },
    };
  },
});
