import { runService } from "@bas/service-kit/lifecycle";

// The service's modules are required only after runService has started OpenTelemetry, so that gRPC, HTTP and pg
// are instrumented when they load.
runService("sessions", async () => {
  const { loadSessionsConfig } = require("./config") as typeof import("./config");
  const { startSessionsService } = require("./service") as typeof import("./service");
  return startSessionsService(loadSessionsConfig());
});
