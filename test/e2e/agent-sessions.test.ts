import { agentSessionsSuite } from "./support/agent-sessions-suite";
import { startAgentStack } from "./support/agent-stack";

/** v3 sessions with browsers on this host (the local driver). */
agentSessionsSuite(() => startAgentStack());
