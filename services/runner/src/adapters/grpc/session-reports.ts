import { status } from "@grpc/grpc-js";
import { sessions } from "@bas/proto";
import { ClientError, connectClient, type PromiseClient, retryUnavailable } from "@bas/service-kit";
import { StaleAttemptError } from "../../app/ports";

type Reports = PromiseClient<sessions.RunnerReportsClient>;

export interface SessionReports {
  sandboxReady(req: sessions.SandboxReadyRequest): Promise<void>;
  sandboxFailed(req: sessions.SandboxFailedRequest): Promise<void>;
  taskStarted(req: sessions.TaskStartedRequest): Promise<void>;
  stepRecorded(req: sessions.StepRecordedRequest): Promise<void>;
  taskCompleted(req: sessions.TaskCompletedRequest): Promise<void>;
  taskFailed(req: sessions.TaskFailedRequest): Promise<void>;
  usageReported(req: sessions.UsageReportedRequest): Promise<void>;
  taskSecrets(req: sessions.GetTaskSecretsRequest): Promise<Record<string, string>>;
  close(): void;
}

/**
 * The sessions service's runner-facing API. A report about a task that is no longer current (stopped, ended,
 * session gone) becomes StaleAttemptError: the attempt must stop. An unreachable service is retried with backoff.
 */
export function connectSessionReports(address: string): SessionReports {
  const client: Reports = connectClient(sessions.RunnerReportsClient, address, 15_000);

  async function call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await retryUnavailable(fn);
    } catch (err) {
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
    taskSecrets: async (req) => (await call(() => client.getTaskSecrets(req))).values,
    close: () => client.close(),
  };
}
