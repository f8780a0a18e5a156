import { CALL_SECONDS_BUCKETS, createServiceMetrics, type ServiceMetrics } from "@bas/service-kit";
import { Histogram } from "prom-client";
import type { HttpMetrics } from "../../http/request-metrics";

/** The gateway's Prometheus metrics: what every service exports, and the REST API's latency. */
export function createGatewayMetrics(): ServiceMetrics & HttpMetrics {
  const base = createServiceMetrics("gateway");
  const duration = new Histogram({
    name: "bas_http_server_duration_seconds",
    help: "REST requests answered, by method, route template and status code, and how long each took to answer.",
    labelNames: ["method", "route", "status"] as const,
    buckets: CALL_SECONDS_BUCKETS,
    registers: [base.registry],
  });
  return {
    ...base,
    requestAnswered: ({ method, route, status, seconds }) =>
      duration.observe({ method, route, status: String(status) }, seconds),
  };
}
