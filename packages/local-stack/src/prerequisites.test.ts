import { loadStackConfig } from "./config";
import { checkPrerequisites } from "./prerequisites";

// Existing NATS and Postgres, browsers in pods: the Node.js version is all that is left to check.
const config = loadStackConfig({ NATS_URL: "nats://127.0.0.1:4222", DATABASE_URL: "postgres://x@127.0.0.1/bas" });
const env = { BROWSER_DRIVER: "kubernetes" };

test("an older Node.js is named with the version to install", () => {
  expect(checkPrerequisites(config, env, "v20.20.2").missing).toEqual([
    "Node.js 24 or newer (this is v20.20.2, which the service is not tested on): install Node.js 24, the current " +
      "LTS (https://nodejs.org/en/download), and start again with it",
  ]);
});

test("Node.js 24 and newer pass", () => {
  expect(checkPrerequisites(config, env, "v24.11.0").missing).toEqual([]);
  expect(checkPrerequisites(config, env, "v25.1.0").missing).toEqual([]);
});
