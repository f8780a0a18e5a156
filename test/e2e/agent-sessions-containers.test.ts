import { type ContainerEngine, startContainerEngine } from "../../services/browser-pool/test/support/container-engine";
import { agentSessionsSuite } from "./support/agent-sessions-suite";
import { startAgentStack } from "./support/agent-stack";

/**
 * The v3 sessions suite with every browser a container of the browser image (BROWSER_DRIVER=container, Podman's
 * API): the services run on this host, the browsers do not.
 */
let engine: ContainerEngine | undefined;

agentSessionsSuite(
  async () => {
    engine = await startContainerEngine((line) => console.log(`agent-sessions-containers: ${line}`));
    return startAgentStack({
      browserPoolEnv: {
        BROWSER_DRIVER: "container",
        CONTAINER_ENGINE_SOCKET: engine.socket,
        CONTAINER_BROWSER_IMAGE: engine.browserImage,
      },
    });
  },
  // The engine goes once the stack has stopped its browsers' containers.
  { setupTimeoutMs: 900_000, afterStack: async () => engine?.close() },
);
