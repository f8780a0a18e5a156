import { randomBytes, randomUUID } from "node:crypto";
import { AckPolicy, type Consumer } from "@nats-io/jetstream";
import { createNatsEventStore, type EventStore } from "@bas/event-store";
import { runner, sessions } from "@bas/proto";
import { ClientError, connectClient, type PromiseClient } from "@bas/service-kit";
import { createTestInfra, natsUrl, type TestInfra } from "@bas/testing";
import { loadSessionsConfig } from "../src/config";
import { type SessionsService, type SessionsServiceDeps, startSessionsService } from "../src/service";

export type SessionsApi = PromiseClient<sessions.SessionsClient>;
export type ReportsApi = PromiseClient<sessions.RunnerReportsClient>;

/**
 * One sessions service on its own namespace and database, the gRPC clients the gateway and the runner use, and
 * the runners' side of the work queue. `restart()` closes the service and starts it again on the same NATS and
 * Postgres, as a crash and restart would.
 */
export interface Harness {
  infra: TestInfra;
  store: EventStore;
  api: SessionsApi;
  reports: ReportsApi;
  service: SessionsService;
  restart(): Promise<void>;
  /** The next TaskAssignment on the work queue, taken and acked as a runner would. */
  takeAssignment(timeoutMs?: number): Promise<runner.TaskAssignment>;
  /** Every TaskAssignment now on the work queue, without taking any. */
  queuedAssignments(): Promise<runner.TaskAssignment[]>;
  close(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}, deps: SessionsServiceDeps = {}): Promise<Harness> {
  const infra = await createTestInfra();
  const config = loadSessionsConfig({
    NATS_URL: natsUrl(),
    DATABASE_URL: infra.databaseUrl,
    NAMESPACE: infra.namespace,
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    SMTP_PORT: "0",
    MAIL_DOMAIN: "mail.test",
    LOG_LEVEL: "silent",
    PUBLIC_URL: "http://bas.test/",
    SECRETS_KEY: randomBytes(32).toString("hex"),
    ...env,
  });
  const start = () => startSessionsService(config, { ackWaitMs: 1_000, ...deps });
  const connect = (port: number) => ({
    api: connectClient(sessions.SessionsClient, `127.0.0.1:${port}`),
    reports: connectClient(sessions.RunnerReportsClient, `127.0.0.1:${port}`),
  });
  const workSubject = infra.streams.work.subject("tasks");
  await infra.jsm.consumers.add(infra.streams.work.stream, {
    durable_name: "runners",
    filter_subject: workSubject,
    ack_policy: AckPolicy.Explicit,
  });
  const consumer: Consumer = await infra.js.consumers.get(infra.streams.work.stream, "runners");

  const service = await start();
  const harness: Harness = {
    infra,
    store: createNatsEventStore(infra),
    service,
    ...connect(service.grpcPort),
    async restart() {
      harness.api.close();
      harness.reports.close();
      await harness.service.close();
      harness.service = await start();
      Object.assign(harness, connect(harness.service.grpcPort));
    },
    async takeAssignment(timeoutMs = 10_000) {
      const m = await consumer.next({ expires: timeoutMs });
      if (!m) throw new Error("no TaskAssignment arrived on the work queue");
      await m.ackAck(); // a work-queue message leaves the stream only once its ack is confirmed
      return runner.TaskAssignment.fromJSON(m.json());
    },
    async queuedAssignments() {
      const info = await infra.jsm.streams.info(infra.streams.work.stream);
      const found: runner.TaskAssignment[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m = await infra.jsm.streams.getMessage(infra.streams.work.stream, { seq }).catch(() => null);
        if (m) found.push(runner.TaskAssignment.fromJSON(m.json()));
      }
      return found;
    },
    async close() {
      harness.api.close();
      harness.reports.close();
      await harness.service.close();
      await infra.close();
    },
  };
  return harness;
}

/** A CreateSessionRequest with the gateway's defaults filled in. */
export function createRequest(
  projectId: string,
  overrides: Partial<sessions.CreateSessionRequest> = {},
): sessions.CreateSessionRequest {
  return sessions.CreateSessionRequest.fromPartial({
    projectId,
    model: "svc-max",
    browser: { proxyCountryCode: "us", record: false },
    ...overrides,
  });
}

export const newProject = () => `project-${randomUUID()}`;

/** The error a call failed with (the test fails if it did not). */
export async function failure(call: Promise<unknown>): Promise<ClientError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ClientError) return err;
    throw err;
  }
  throw new Error("the call succeeded but was expected to fail");
}
