import { status } from "@grpc/grpc-js";
import { sessions } from "@bas/proto";
import { ClientError, connectClient, type PromiseClient, retry } from "@bas/service-kit";
import type { TaskReports } from "../../app/attempt-reports";
import { type OutagePolicy, StaleAttemptError, SupersededAttemptError } from "../../app/ports";

type Reports = PromiseClient<sessions.RunnerReportsClient>;

/** The runner-facing API of the sessions service, over gRPC. */
export interface SessionReports extends TaskReports {
  close(): void;
}

/**
 * The sessions service's runner-facing API. A report about a task that is no longer current (stopped, ended,
 * session gone) becomes StaleAttemptError, and one from an attempt a later one superseded SupersededAttemptError:
 * the attempt must stop. While the service is unavailable (restarting, or its NATS or Postgres is), a report waits
 * and is tried again with backoff for up to the outage grace.
 */
export function connectSessionReports(address: string, outage: OutagePolicy): SessionReports {
  const client: Reports = connectClient(sessions.RunnerReportsClient, address, 15_000);

  async function call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await retry(fn, {
        graceMs: outage.graceMs,
        onRetry: (err, { waitedMs }) => outage.onWait?.("sessions", err, waitedMs),
      });
    } catch (err) {
      if (err instanceof ClientError && err.code === status.FAILED_PRECONDITION && err.kind === "superseded") {
        throw new SupersededAttemptError(err.details, { cause: err });
      }
      if (err instanceof ClientError && (err.code === status.FAILED_PRECONDITION || err.code === status.NOT_FOUND)) {
        throw new StaleAttemptError(err.details, { cause: err });
      }
      throw err;
    }
  }

  return {
    sandboxReady: async (req) => void (await call(() => client.sandboxReady(req))),
    sandboxFailed: async (req) => void (await call(() => client.sandboxFailed(req))),
    taskStarted: async (req) => void (await call(() => client.taskStarted(req))),
    stepRecorded: async (req) => void (await call(() => client.stepRecorded(req))),
    taskCompleted: async (req) => void (await call(() => client.taskCompleted(req))),
    taskFailed: async (req) => void (await call(() => client.taskFailed(req))),
    usageReported: async (req) => void (await call(() => client.usageReported(req))),
    taskProgress: (req) => call(() => client.getTaskProgress(req)),
    taskSecrets: (req) => call(() => client.getTaskSecrets(req)),
    close: () => client.close(),
  };
}
