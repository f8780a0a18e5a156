import { containerAgentStack } from "./support/container-agent-stack";
import { officialClientSuite } from "./support/official-client-suite";

/** The official client's checks (v3 runs and browsers, workspaces, v4 runs) with every browser a container. */
const containers = containerAgentStack("official-client-containers");
officialClientSuite(() => containers.start(), containers);
