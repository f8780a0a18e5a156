import { type ContainerEngine, startContainerEngine } from "../../services/browser-pool/test/support/container-engine";
import { startAgentStack } from "./support/agent-stack";
import { officialClientSuite } from "./support/official-client-suite";

/**
 * The official client's checks (v3 runs and browsers, workspaces, v4 runs) with every browser a container of the
 * browser image (BROWSER_DRIVER=container, Podman's API): the services run on this host, the browsers do not.
 */
let engine: ContainerEngine | undefined;

officialClientSuite(
  async () => {
    engine = await startContainerEngine((line) => console.log(`official-client-containers: ${line}`));
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
