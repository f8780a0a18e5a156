import {
  type CallOptions,
  type Client,
  type ClientUnaryCall,
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type ServiceError as GrpcServiceError,
  status,
} from "@grpc/grpc-js";
import { ERROR_FIELD_KEY, ERROR_KIND_KEY } from "./grpc-handler";

/** A failed call, as the caller sees it: the status, the server's message and the error kind it sent. */
export class ClientError extends Error {
  override name = "ClientError";
  constructor(
    readonly code: status,
    readonly details: string,
    readonly kind: string | undefined,
    readonly field: (string | number)[] | undefined,
    options?: ErrorOptions,
  ) {
    super(`${status[code]}: ${details}`, options);
  }
  /** Worth retrying: the service was unreachable or overloaded, not the request wrong. */
  get retryable(): boolean {
    return this.code === status.UNAVAILABLE || this.code === status.DEADLINE_EXCEEDED;
  }
}

type Callback<Res> = (err: GrpcServiceError | null, response: Res) => void;
type UnaryMethod<Req, Res> = (
  req: Req,
  md: Metadata,
  options: Partial<CallOptions>,
  cb: Callback<Res>,
) => ClientUnaryCall;

/** Every unary method of a ts-proto grpc-js client as an async function. */
export type PromiseClient<C> = {
  [K in keyof C as C[K] extends UnaryMethod<any, any> ? K : never]: C[K] extends UnaryMethod<infer Req, infer Res>
    ? (request: Req, options?: { deadlineMs?: number; metadata?: Metadata; signal?: AbortSignal }) => Promise<Res>
    : never;
} & { close(): void };

function toClientError(err: GrpcServiceError): ClientError {
  const kind = err.metadata?.get(ERROR_KIND_KEY)[0]?.toString();
  const rawField = err.metadata?.get(ERROR_FIELD_KEY)[0]?.toString();
  return new ClientError(err.code, err.details, kind, rawField ? JSON.parse(rawField) : undefined, { cause: err });
}

/** Wraps a ts-proto grpc-js client; every call gets a deadline (default 10 s). */
export function promiseClient<C extends Client>(client: C, defaultDeadlineMs = 10_000): PromiseClient<C> {
  return new Proxy(client as any, {
    get(target, prop) {
      if (prop === "close") return () => target.close();
      const method = target[prop];
      if (typeof method !== "function") return method;
      return (request: unknown, options: { deadlineMs?: number; metadata?: Metadata; signal?: AbortSignal } = {}) =>
        new Promise((resolve, reject) => {
          const deadline = new Date(Date.now() + (options.deadlineMs ?? defaultDeadlineMs));
          // A long-lived signal (a task's) serves many calls: each takes its listener away when it ends.
          const cancel = () => call.cancel();
          const call = method.call(
            target,
            request,
            options.metadata ?? new Metadata(),
            { deadline },
            (err: any, res: any) => {
              options.signal?.removeEventListener("abort", cancel);
              if (err) reject(toClientError(err));
              else resolve(res);
            },
          ) as ClientUnaryCall;
          options.signal?.addEventListener("abort", cancel, { once: true });
        });
    },
  });
}

/**
 * grpc-js backs off reconnecting to a server that went away up to 2 minutes: a service back after a 30 s restart
 * would stay unreachable to its callers for a minute more. Capped, a caller sees it back within a few seconds.
 */
const RECONNECT_BACKOFF = {
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.min_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 2_000,
};

/**
 * A target that names several replicas (a `dns:///` name of a headless Service, an `ipv4:` list) gets its calls spread
 * over all of them, each to the next ready one (round robin), where grpc-js's default (the first address that answers)
 * would send them all to one; a replica that is down is passed over. A changed set of replicas (a pod replaced, one
 * added) is found by resolving the name again: when a connection fails (at most once a second here) and when the
 * servers close connections, every few minutes (grpc-server.ts, CONNECTION_AGE). A plain `host:port` (one process, or
 * a Service's virtual IP) keeps the default: one connection, made again on the next call after it drops.
 */
const manyReplicas = (address: string) => /^(dns|ipv4):/.test(address);
const ROUND_ROBIN = {
  "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  "grpc.dns_min_time_between_resolutions_ms": 1_000,
};

/** Creates a ts-proto client for `address` (see `grpcTarget`) and wraps it. */
export function connectClient<C extends Client>(
  Ctor: new (
    address: string,
    creds: ReturnType<typeof credentials.createInsecure>,
    options?: Record<string, unknown>,
  ) => C,
  address: string,
  defaultDeadlineMs?: number,
): PromiseClient<C> {
  return promiseClient(
    new Ctor(address, credentials.createInsecure(), {
      ...RECONNECT_BACKOFF,
      ...(manyReplicas(address) ? ROUND_ROBIN : {}),
    }),
    defaultDeadlineMs,
  );
}

/**
 * Makes a call until a replica with room takes it: a replica that is full answers `at_capacity`, and, as calls go
 * round robin, the next call goes to the next replica. `replicas` bounds the attempts (how many the target has);
 * after that many refusals the last one is the answer. Only for calls that change nothing when refused.
 */
export async function onReplicaWithRoom<T>(call: () => Promise<T>, replicas: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof ClientError && err.kind === "at_capacity") || attempt >= replicas) throw err;
    }
  }
}

let HealthClient: ReturnType<typeof makeGenericClientConstructor> | undefined;
/** Loaded on first use: grpc-health-check takes ~90 ms to load, which a command-line call that never asks pays too. */
async function healthClientClass() {
  HealthClient ??= makeGenericClientConstructor((await import("grpc-health-check")).service as any, "Health");
  return HealthClient;
}

/** Asks a server's grpc.health.v1 service whether it is SERVING. Never throws. */
export async function checkGrpcHealth(address: string, timeoutMs = 2_000): Promise<boolean> {
  const client = new (await healthClientClass())(address, credentials.createInsecure()) as any;
  try {
    return await new Promise<boolean>((resolve) => {
      client.Check({ service: "" }, { deadline: new Date(Date.now() + timeoutMs) }, (err: unknown, res: any) =>
        resolve(!err && (res?.status === "SERVING" || res?.status === 1)),
      );
    });
  } finally {
    client.close();
  }
}
