import { agentRunsSuite } from "./support/agent-runs-suite";
import { startAgentStack } from "./support/agent-stack";

/** v4 runs with browsers on this host (the local driver). */
agentRunsSuite((options) => startAgentStack(options));
