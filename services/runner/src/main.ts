import { runService } from "@bas/service-kit/lifecycle";

// The service's modules are required only after runService has started OpenTelemetry, so that gRPC, HTTP and pg
// are instrumented when they load.
runService("runner", async () => {
  const { loadRunnerConfig } = require("./config") as typeof import("./config");
  const { startRunnerService } = require("./service") as typeof import("./service");
  return startRunnerService(loadRunnerConfig());
});
