/**
 * The HEALTHCHECK of the gRPC services' images: `node grpc-health-probe.js [host:port]` asks the service's
 * grpc.health.v1 service (what the Kubernetes probes ask too) and exits 0 when it is SERVING, 1 otherwise. The
 * address defaults to the container's own GRPC_PORT on loopback. Only grpc-js is loaded: it runs every few seconds.
 */
import { credentials, makeGenericClientConstructor } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";

const address = process.argv[2] ?? `127.0.0.1:${process.env.GRPC_PORT}`;
const Health = makeGenericClientConstructor(healthService as any, "Health");
const client = new Health(address, credentials.createInsecure()) as any;
client.Check({ service: "" }, { deadline: Date.now() + 3_000 }, (err: Error | null, res?: { status: unknown }) => {
  const serving = !err && (res?.status === "SERVING" || res?.status === 1);
  if (!serving) console.error(`${address}: ${err?.message ?? `status ${res?.status}`}`);
  process.exit(serving ? 0 : 1);
});
