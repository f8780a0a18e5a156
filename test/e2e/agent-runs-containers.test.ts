import { agentRunsSuite } from "./support/agent-runs-suite";
import { containerAgentStack } from "./support/container-agent-stack";

/** The v4 runs suite with every browser a container. */
const containers = containerAgentStack("agent-runs-containers");
agentRunsSuite((options) => containers.start(options), containers);
