// The four contracts the CLI speaks and the gRPC client alone, not the packages' indexes: every command is a process
// of its own, and loading every contract and all of service-kit made a `bas help` take 1.3 s (now 0.6-0.7 s).
import * as billing from "@bas/proto/gen/bas/v1/billing";
import * as gateway from "@bas/proto/gen/bas/v1/gateway";
import * as runner from "@bas/proto/gen/bas/v1/runner";
import * as webhooks from "@bas/proto/gen/bas/v1/webhooks";
import { connectClient } from "@bas/service-kit/grpc-client";
import { loadStackEnv } from "./stack-env";

/** The user's mistake or a refusal that needs no stack trace: printed as is, exit code 1. */
export class CliError extends Error {
  override name = "CliError";
}

const DEADLINE_MS = 15_000;

/** gRPC clients of the services, connected on first use to the addresses the stack published. */
export function createClients() {
  const { env, file } = loadStackEnv();
  const opened: Array<{ close(): void }> = [];
  const addressOf = (variable: string) => {
    const address = env[variable];
    if (address) return address;
    throw new CliError(
      file
        ? `${file} does not name ${variable}: start the stack again with npm start (it rewrites the file), or set ${variable}`
        : `no local stack found (no .data/stack.env here or at the checkout's root): start it with npm start, or set ${variable} (host:port) or DATA_DIR`,
    );
  };
  const lazy = <T extends { close(): void }>(variable: string, open: (address: string) => T) => {
    let client: T | undefined;
    return () => {
      if (!client) {
        client = open(addressOf(variable));
        opened.push(client);
      }
      return client;
    };
  };
  return {
    projects: lazy("GATEWAY_ADDR", (a) => connectClient(gateway.ProjectAdminClient, a, DEADLINE_MS)),
    runner: lazy("RUNNER_ADDR", (a) => connectClient(runner.RunnerClient, a, DEADLINE_MS)),
    billing: lazy("BILLING_ADDR", (a) => connectClient(billing.BillingClient, a, DEADLINE_MS)),
    webhooks: lazy("SESSIONS_ADDR", (a) => connectClient(webhooks.WebhooksClient, a, DEADLINE_MS)),
    close: () => {
      for (const client of opened) client.close();
    },
  };
}

export type Clients = ReturnType<typeof createClients>;
