import { describeProblems } from "../../app/health";
import { defineRoute } from "../../http/route";

export const route = defineRoute({
  method: "get",
  path: "/healthz",
  auth: "public",
  hidden: true,
  operationId: "health",
  summary: "200 when every service and store answers and browsers can be launched; 503 naming what is not, and why",
  responses: { 200: { description: "Healthy" } },
  async handler(_request, deps) {
    const report = await deps.health();
    if (report.ok) return { body: { status: "ok", checks: report.checks } };
    return {
      status: 503,
      body: { status: "unavailable", detail: `Unavailable: ${describeProblems(report)}`, checks: report.checks },
      headers: { "Cache-Control": "no-store" },
    };
  },
});
