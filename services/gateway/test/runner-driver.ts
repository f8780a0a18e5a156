import type { MsgRequest } from "@nats-io/jetstream";
import { sessions } from "@bas/proto";
import { connectClient, type PromiseClient } from "@bas/service-kit";
import type { Stack } from "./harness";

export type RunnerReports = PromiseClient<InstanceType<typeof sessions.RunnerReportsClient>>;

/** Reports to the sessions service exactly as the runner does, over its gRPC API. */
export function runnerReports(stack: Stack): RunnerReports {
  return connectClient(sessions.RunnerReportsClient, `127.0.0.1:${stack.sessions!.grpcPort}`);
}

/** The task id the sessions service dispatched for a session, read from the work queue like a runner would. */
export async function dispatchedTaskId(stack: Stack, sessionId: string, timeoutMs = 10_000): Promise<string> {
  const { jsm, streams } = stack.infra;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (let seq = 1; ; ) {
      const m = await jsm.streams
        .getMessage(streams.work.stream, { seq, next_by_subj: streams.work.subject("tasks") } as MsgRequest)
        .catch(() => null);
      if (!m) break;
      const assignment = m.json<{ taskId: string; sessionId: string }>();
      if (assignment.sessionId === sessionId) return assignment.taskId;
      seq = m.seq + 1;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no task was dispatched for session ${sessionId}`);
}
