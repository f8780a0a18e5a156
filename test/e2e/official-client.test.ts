import { startAgentStack } from "./support/agent-stack";
import { officialClientSuite } from "./support/official-client-suite";

// The official client against the service as it ships: full Chromium, not the tests' MEANS_CHROMIUM.
officialClientSuite(() => startAgentStack({ browserPoolEnv: { CHROMIUM_PATH: "/usr/bin/chromium" } }));
