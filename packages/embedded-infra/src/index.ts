export { freePort } from "./free-port";
export { findChromium, findNatsServer, findPostgresBin, MissingBinaryError } from "./binaries";
export { startNatsServer, type EmbeddedNats } from "./nats-server";
export { createDatabaseIfMissing, startPostgres, type EmbeddedPostgres, type PostgresOptions } from "./postgres-server";
export { waitForExit, waitForLine } from "./process";
