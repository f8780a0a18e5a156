import {
  type ContainerEngine,
  startContainerEngine,
} from "../../../services/browser-pool/test/support/container-engine";
import { type AgentStack, type AgentStackOptions, startAgentStack } from "./agent-stack";

/**
 * The agent stack with every browser a container of the browser image (BROWSER_DRIVER=container, Podman's API): the
 * services run on this host, the browsers do not. `start` brings the engine (building the image once if it lacks it)
 * and the stack up; `afterStack` closes the engine, once the stack has stopped its browsers' containers.
 */
export function containerAgentStack(name: string) {
  let engine: ContainerEngine | undefined;
  return {
    async start(options: AgentStackOptions = {}): Promise<AgentStack> {
      engine = await startContainerEngine((line) => console.log(`${name}: ${line}`));
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
    afterStack: async () => engine?.close(),
    /** Building the image from an empty store takes minutes. */
    setupTimeoutMs: 900_000,
  };
}
