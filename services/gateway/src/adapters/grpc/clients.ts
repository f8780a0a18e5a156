import { status } from "@grpc/grpc-js";
import {
  type billing,
  type browserPool,
  type runner,
  type runs,
  type sessions,
  type webhooks,
  type workspaces,
  billing as billingProto,
  browserPool as browserPoolProto,
  runner as runnerProto,
  runs as runsProto,
  sessions as sessionsProto,
  webhooks as webhooksProto,
  workspaces as workspacesProto,
} from "@bas/proto";
import { ClientError, connectClient, type PromiseClient } from "@bas/service-kit";

type Ctor<C> = new (address: string, creds: any) => C;

/** A client for a service the deployment did not configure: every call fails as UNAVAILABLE (answered 503). */
function unconfigured<C>(name: string): PromiseClient<C> {
  return new Proxy({} as PromiseClient<C>, {
    get(_target, prop) {
      if (prop === "close") return () => undefined;
      if (prop === "then") return undefined;
      return async () => {
        throw new ClientError(status.UNAVAILABLE, `${name} is not configured`, undefined, undefined);
      };
    },
  });
}

function client<C>(name: string, ctor: Ctor<C>, address: string | undefined, deadlineMs: number): PromiseClient<C> {
  return address ? (connectClient(ctor as any, address, deadlineMs) as PromiseClient<C>) : unconfigured<C>(name);
}

export interface ServiceClients {
  sessions: PromiseClient<InstanceType<typeof sessions.SessionsClient>>;
  /** The v4 run API, served by the sessions service. */
  runs: PromiseClient<InstanceType<typeof runs.RunsClient>>;
  /** A project's webhook endpoints, served by the sessions service. */
  webhooks: PromiseClient<InstanceType<typeof webhooks.WebhooksClient>>;
  /** Workspaces and their files, served by the sessions service. */
  workspaces: PromiseClient<InstanceType<typeof workspaces.WorkspacesClient>>;
  browserPool: PromiseClient<InstanceType<typeof browserPool.BrowserPoolClient>>;
  billing: PromiseClient<InstanceType<typeof billing.BillingClient>>;
  runner: PromiseClient<InstanceType<typeof runner.RunnerClient>>;
  close(): void;
}

export function createServiceClients(
  addresses: { sessions?: string; browserPool?: string; billing?: string; runner?: string },
  deadlineMs: number,
): ServiceClients {
  const clients = {
    sessions: client("sessions", sessionsProto.SessionsClient, addresses.sessions, deadlineMs),
    runs: client("sessions", runsProto.RunsClient, addresses.sessions, deadlineMs),
    webhooks: client("sessions", webhooksProto.WebhooksClient, addresses.sessions, deadlineMs),
    workspaces: client("sessions", workspacesProto.WorkspacesClient, addresses.sessions, deadlineMs),
    browserPool: client("browser-pool", browserPoolProto.BrowserPoolClient, addresses.browserPool, deadlineMs),
    billing: client("billing", billingProto.BillingClient, addresses.billing, deadlineMs),
    runner: client("runner", runnerProto.RunnerClient, addresses.runner, deadlineMs),
  };
  return {
    ...clients,
    close: () => {
      for (const c of Object.values(clients)) c.close();
    },
  };
}
