import { runService } from "@bas/service-kit/lifecycle";

// The service's modules are required only after runService has started OpenTelemetry, so that gRPC, HTTP and pg
// are instrumented when they load.
runService("browser-pool", async () => {
  const { loadBrowserPoolConfig } = require("./config") as typeof import("./config");
  const { startBrowserPoolService } = require("./service") as typeof import("./service");
  return startBrowserPoolService(loadBrowserPoolConfig());
});
