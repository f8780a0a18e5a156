import { GrpcInstrumentation } from "@opentelemetry/instrumentation-grpc";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
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
