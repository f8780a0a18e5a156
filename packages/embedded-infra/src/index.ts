export { freePort } from "./free-port";
export {
  checkChromiumRuns,
  checkSandboxTools,
  findChromium,
  findNatsServer,
  findPostgresBin,
  MissingBinaryError,
} from "./binaries";
export { startNatsServer, type EmbeddedNats } from "./nats-server";
export {
  createDatabaseIfMissing,
  postgresUser,
  startPostgres,
  type EmbeddedPostgres,
  type PostgresOptions,
} from "./postgres-server";
export type { ServerProcess } from "./server-process";
export { waitForExit, waitForLine } from "./process";
