import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from "@grpc/grpc-js";
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

export function createGrpcServer(): GrpcServer {
  const server = new Server({ "grpc.max_receive_message_length": 16 * 1024 * 1024 });
  const health = new HealthImplementation({ "": "NOT_SERVING" });
  health.addToServer(server);
  return {
    add: (definition, implementation) => server.addService(definition, implementation),
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
