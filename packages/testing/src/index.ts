export { createTestDatabase, createTestInfra, natsUrl, testNamespace, type TestInfra } from "./isolation";
export { eventually } from "./eventually";
export { storedText } from "./stored-text";
export { runEnv } from "./run-env";
export { type ServiceProcess, spawnServiceProcess } from "./service-process";
export { type MetricSample, parseMetrics, scrapeMetrics, sumOf } from "./metrics-text";
export { type SeverableLink, startSeverableLink } from "./severable-link";
export { commandOf, processesOfRun } from "./run-processes";
export { MEANS_CHROMIUM } from "./means-chromium";
