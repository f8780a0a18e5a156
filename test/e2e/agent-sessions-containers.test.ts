import { agentSessionsSuite } from "./support/agent-sessions-suite";
import { containerAgentStack } from "./support/container-agent-stack";

/** The v3 sessions suite with every browser a container. */
const containers = containerAgentStack("agent-sessions-containers");
agentSessionsSuite(() => containers.start(), containers);
