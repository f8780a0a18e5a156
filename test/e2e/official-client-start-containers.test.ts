import { startContainerizedStack } from "./support/containerized-stack";
import { officialClientSuite } from "./support/official-client-suite";

/**
 * The official client's checks (v3 runs and browsers, workspaces, v4 runs) against `npm run start:containers`: NATS,
 * Postgres and every service a container of the images built from this checkout.
 */
officialClientSuite(() => startContainerizedStack((line) => console.log(`start:containers: ${line}`)), {
  // Building the images from an empty store takes minutes.
  setupTimeoutMs: 1_200_000,
});
