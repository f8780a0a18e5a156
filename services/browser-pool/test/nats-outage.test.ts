import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { natsUrl, type SeverableLink, startSeverableLink } from "@bas/testing";
import { handshake } from "./support/cdp-handshake";
import { eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";

// Two nodes on one database and one NATS; the second reaches NATS through a link the test cuts.
let first: PoolHarness;
let second: PoolHarness;
let link: SeverableLink;
let secondDir: string;

beforeAll(async () => {
  first = await startPoolHarness();
  const nats = new URL(natsUrl());
  link = await startSeverableLink({ host: nats.hostname, port: Number(nats.port) });
  secondDir = mkdtempSync(join(tmpdir(), "bas-bp-outage-"));
  second = await startPoolHarness(
    { NATS_URL: `nats://${link.address}` },
    {},
    { infra: first.infra, dataDir: secondDir },
  );
});
afterAll(async () => {
  await second?.close();
  await first?.close();
  await link?.close();
  rmSync(secondDir, { recursive: true, force: true });
});

test("a browser stopped through another node while its own node was cut off from NATS ends once the link is back", async () => {
  const projectId = randomUUID();
  const created = await second.client.createBrowser({
    projectId,
    settings: { allowedDomains: [], record: false },
    timeoutMinutes: 0,
    metadata: {},
  });
  expect(await handshake(created.cdpUrl)).toBe("open");

  link.cut();
  // The stop is recorded, and announced, while the browser's node hears nothing.
  await first.client.stopBrowser({ projectId, browserId: created.id });
  expect(await first.client.getBrowser({ projectId, browserId: created.id })).toMatchObject({ status: "stopped" });
  await sleep(1_000);
  expect(second.service.liveBrowserIds()).toContain(created.id);
  link.restore();

  // Without it, the browser would run on, usable through its cdpUrl, until its timeout.
  await eventually(async () => (second.service.liveBrowserIds().includes(created.id) ? undefined : true), 20_000);
  // Its processes end right after it leaves the live set (the tear-down runs on its own), within moments.
  await eventually(async () => ((await second.chromiumIds()).includes(created.id) ? undefined : true), 10_000);
  expect(await handshake(created.cdpUrl)).toBe(404);
  expect(await second.client.getBrowser({ projectId, browserId: created.id })).toMatchObject({ status: "stopped" });
}, 60_000);
