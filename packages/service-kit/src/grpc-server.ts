import {
  Server,
  ServerCredentials,
  type ServiceDefinition,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";

export interface GrpcServer {
  add<I extends UntypedServiceImplementation>(definition: ServiceDefinition<I>, implementation: I): void;
  /** Binds and starts; returns the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<number>;
  /** The standard grpc.health.v1 status of the whole server ("" service). */
  setHealth(status: ServingStatus): void;
  /** Stops taking calls, lets in-flight calls finish (bounded), then forces the rest closed. */
  close(graceMs?: number): Promise<void>;
}

/** One answered call: `method` as `package.Service/Method`, `code` the status name (`OK`, `NOT_FOUND`, ...). */
export type GrpcCallObserver = (call: { method: string; code: string; seconds: number }) => void;

export interface GrpcServerOptions {
  /** Told of every unary call of the added services when it is answered (metrics); health checks are left out. */
  onCall?: GrpcCallObserver;
}

/**
 * Clients spread their calls over every replica a name resolves to, and resolve it again when a connection closes
 * (grpc-client.ts): each connection is closed after 5 minutes, its calls in flight given up to 2 more (every call is
 * unary and bounded by a deadline of at most a minute), so that replicas added since get their share.
 */
const CONNECTION_AGE = { "grpc.max_connection_age_ms": 5 * 60_000, "grpc.max_connection_age_grace_ms": 2 * 60_000 };

export function createGrpcServer(options: GrpcServerOptions = {}): GrpcServer {
  const server = new Server({ "grpc.max_receive_message_length": 16 * 1024 * 1024, ...CONNECTION_AGE });
  const health = new HealthImplementation({ "": "NOT_SERVING" });
  health.addToServer(server);
  const { onCall } = options;
  return {
    add: (definition, implementation) =>
      server.addService(definition, onCall ? observed(definition, implementation, onCall) : implementation),
    setHealth: (status) => health.setStatus("", status),
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, bound) =>
          err ? reject(err) : resolve(bound),
        );
      }),
    close: (graceMs = 5_000) =>
      new Promise((resolve) => {
        health.setStatus("", "NOT_SERVING");
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

type UnaryHandler = (call: unknown, callback: (err: { code?: number } | null, ...rest: unknown[]) => void) => void;

/** The implementation with each unary handler timed from its call to its answer (every service's RPCs are unary). */
function observed<I extends UntypedServiceImplementation>(
  definition: ServiceDefinition<I>,
  implementation: I,
  onCall: GrpcCallObserver,
): I {
  const timed = Object.entries(implementation).map(([name, handler]) => {
    const spec = definition[name];
    if (!spec || spec.requestStream || spec.responseStream) return [name, handler];
    const method = spec.path.replace(/^\//, "");
    const unary: UnaryHandler = (call, callback) => {
      const started = process.hrtime.bigint();
      (handler as UnaryHandler)(call, (err, ...rest) => {
        const code = status[err ? (err.code ?? status.UNKNOWN) : status.OK];
        onCall({ method, code, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
        callback(err, ...rest);
      });
    };
    return [name, unary];
  });
  return Object.fromEntries(timed) as I;
}
