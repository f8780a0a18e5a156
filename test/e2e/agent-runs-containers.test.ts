import { type ContainerEngine, startContainerEngine } from "../../services/browser-pool/test/support/container-engine";
import { agentRunsSuite } from "./support/agent-runs-suite";
import { startAgentStack } from "./support/agent-stack";

/**
 * The v4 runs suite with every browser a container of the browser image (BROWSER_DRIVER=container, Podman's API):
 * the services run on this host, the browsers do not.
 */
let engine: ContainerEngine | undefined;

agentRunsSuite(
  async (options) => {
    engine = await startContainerEngine((line) => console.log(`agent-runs-containers: ${line}`));
    return startAgentStack({
      ...options,
      browserPoolEnv: {
        ...options.browserPoolEnv,
        BROWSER_DRIVER: "container",
        CONTAINER_ENGINE_SOCKET: engine.socket,
        CONTAINER_BROWSER_IMAGE: engine.browserImage,
      },
    });
  },
  // The engine goes once the stack has stopped its browsers' containers.
  { setupTimeoutMs: 900_000, afterStack: async () => engine?.close() },
);
