export { loadRunnerConfig, type RunnerConfig } from "./config";
export { type RunnerService, type RunnerServiceDeps, startRunnerService } from "./service";
