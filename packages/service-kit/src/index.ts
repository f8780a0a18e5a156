export { commonEnv, ConfigError, envPort, grpcTarget, jsonEnv, loadConfig } from "./config";
export { type CleanupStack, createCleanupStack, startWithCleanup } from "./cleanup-stack";
export { createLogger, type Logger } from "./logger";
export { startTelemetry, type Telemetry } from "./telemetry";
export { EXIT_CONFIG_ERROR, runService, type RunningService } from "./lifecycle";
export { connectNats, type Nats } from "./nats";
export { createGrpcServer, type GrpcCallObserver, type GrpcServer, type GrpcServerOptions } from "./grpc-server";
export { CALL_SECONDS_BUCKETS, createServiceMetrics, type ServiceMetrics } from "./service-metrics";
export type { ConsumerRef } from "./consumer-lag-metrics";
export { type MetricsServer, startMetricsServer } from "./metrics-server";
export { unary, unaryService, type HandlerLog } from "./grpc-handler";
export {
  checkGrpcHealth,
  ClientError,
  connectClient,
  onReplicaWithRoom,
  promiseClient,
  type PromiseClient,
} from "./grpc-client";
export {
  backoffDelay,
  DEFAULT_GRACE_MS,
  isUnavailable,
  type RetryOptions,
  retry,
} from "./retry";
