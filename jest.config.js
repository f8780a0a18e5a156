/** One jest run for the whole monorepo: shared NATS and Postgres are started once in globalSetup. */
module.exports = {
  testEnvironment: "node",
  testMatch: ["<rootDir>/{packages,services,test}/**/*.test.ts"],
  transform: { "^.+\\.(t|j)sx?$": ["@swc/jest", { jsc: { target: "es2022" } }] },
  transformIgnorePatterns: [
    "/node_modules/(?!(@kubernetes/client-node|openid-client|oauth4webapi|jose|proxy-chain|socks-proxy-agent|agent-base)/)",
  ],
  globalSetup: "<rootDir>/packages/testing/src/global-setup.ts",
  globalTeardown: "<rootDir>/packages/testing/src/global-teardown.ts",
  reporters: ["default", "<rootDir>/packages/testing/src/summary-reporter.js"],
  // Out of /tmp: a test run leaves nothing there.
  cacheDirectory: "<rootDir>/node_modules/.cache/jest",
  testTimeout: 60_000,
  maxWorkers: 2,
};
