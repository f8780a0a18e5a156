import { z } from "zod";
import { loadConfig } from "./config";

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry Node SDK. Traces are exported over OTLP/HTTP only when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set; otherwise (or with OTEL_SDK_DISABLED=true) nothing is started. Must run before the instrumented modules load.
 */
export function startTelemetry(serviceName: string, env?: NodeJS.ProcessEnv): Telemetry {
  const config = loadConfig(
    {
      OTEL_SDK_DISABLED: z.enum(["true", "false"]).optional(),
      OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
    },
    env,
  );
  if (config.OTEL_SDK_DISABLED === "true" || !config.OTEL_EXPORTER_OTLP_ENDPOINT) return { shutdown: async () => {} };
  // Loaded only when tracing is on: the SDK and its exporters cost every service memory and start-up time otherwise
  // (`npm run bench -- service-startup`). Synchronous, as the instrumentations must be in place before what they
  // instrument loads.
  const { NodeSDK } = require("@opentelemetry/sdk-node") as typeof import("@opentelemetry/sdk-node");
  const { OTLPTraceExporter } =
    require("@opentelemetry/exporter-trace-otlp-http") as typeof import("@opentelemetry/exporter-trace-otlp-http");
  const { HttpInstrumentation } =
    require("@opentelemetry/instrumentation-http") as typeof import("@opentelemetry/instrumentation-http");
  const { GrpcInstrumentation } =
    require("@opentelemetry/instrumentation-grpc") as typeof import("@opentelemetry/instrumentation-grpc");
  const sdk = new NodeSDK({
    serviceName,
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [new HttpInstrumentation(), new GrpcInstrumentation()],
  });
  sdk.start();
  return {
    // Without a collector, shutdown can hang on export retries: bound it and never let it fail the exit.
    shutdown: () =>
      Promise.race([sdk.shutdown(), new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref())]).catch(
        () => undefined,
      ),
  };
}
