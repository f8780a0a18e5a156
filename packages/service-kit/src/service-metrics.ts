import type { JetStreamManager } from "@nats-io/jetstream";
import { collectDefaultMetrics, Histogram, Registry } from "prom-client";
import { type ConsumerRef, registerConsumerLag } from "./consumer-lag-metrics";
import type { GrpcCallObserver } from "./grpc-server";

/** What every service exports; each adds its own metrics to `registry`. */
export interface ServiceMetrics {
  registry: Registry;
  /** Times every answered gRPC call: pass it to `createGrpcServer({ onCall })`. */
  grpcCall: GrpcCallObserver;
  /** Reports the lag of these durable consumers (the ones the service reads) at every scrape. */
  watchConsumers(jsm: JetStreamManager, consumers: ConsumerRef[]): void;
}

/** Latency buckets of calls between services: most answer in milliseconds, a browser launch in seconds. */
export const CALL_SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * A registry of the service's own (tests run several services in one process), every sample labelled with
 * `service`, holding the Node.js process metrics (CPU, memory, event-loop lag, GC), the gRPC server's latency
 * histogram `bas_grpc_server_duration_seconds{method,code}` and the consumer lag gauge.
 *
 * @example
 * const metrics = createServiceMetrics("sessions");
 * const grpc = createGrpcServer({ onCall: metrics.grpcCall });
 * const server = await startMetricsServer(metrics.registry, "0.0.0.0", 9461);
 */
export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const grpcDuration = new Histogram({
    name: "bas_grpc_server_duration_seconds",
    help: "gRPC calls answered by this service, by method and status code, and how long each took.",
    labelNames: ["method", "code"] as const,
    buckets: CALL_SECONDS_BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    grpcCall: ({ method, code, seconds }) => grpcDuration.observe({ method, code }, seconds),
    watchConsumers: registerConsumerLag(registry),
  };
}
