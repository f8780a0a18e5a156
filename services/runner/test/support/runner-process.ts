import { type ServiceProcess, spawnServiceProcess } from "@bas/testing";

export type RunnerProcess = ServiceProcess;

/** Starts `services/runner/src/main.ts` as its own process, as the local stack does; resolves once it serves. */
export const spawnRunner = (env: Record<string, string>): Promise<RunnerProcess> =>
  spawnServiceProcess({ entry: "services/runner/src/main.ts", readyMessage: "runner started", env });
