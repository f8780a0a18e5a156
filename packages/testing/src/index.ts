export { createTestDatabase, createTestInfra, natsUrl, testNamespace, type TestInfra } from "./isolation";
export { eventually } from "./eventually";
export { runEnv } from "./run-env";
export { type ServiceProcess, spawnServiceProcess } from "./service-process";
