import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { chromiumIdsIn, eventually, type PoolHarness, startPoolHarness } from "./support/pool-harness";

// Two nodes that count a node silent for 2 s as gone; each project may run one browser.
const LIMITS = { NODE_LOST_AFTER_SECONDS: "2", MAX_BROWSERS_PER_PROJECT: "1" };
let survivor: PoolHarness;
let lostDir: string;
beforeAll(async () => {
  survivor = await startPoolHarness(LIMITS);
  lostDir = mkdtempSync(join(tmpdir(), "bas-bp-lost-"));
});
afterAll(async () => {
  await survivor?.close();
  rmSync(lostDir, { recursive: true, force: true });
});

const create = (h: PoolHarness, projectId: string) =>
  h.client.createBrowser({
    projectId,
    settings: { screenWidth: 800, screenHeight: 600, allowedDomains: [], record: false },
    timeoutMinutes: 0,
    metadata: {},
  });

test("the browsers of a node gone for good are recorded stopped by another node, and no longer count", async () => {
  // A node that leaves its browsers running when it goes, as a crash would.
  const env = { ...LIMITS, NODE_ID: `lost-${randomUUID()}`, STOP_BROWSERS_ON_SHUTDOWN: "false" };
  const shared = { infra: survivor.infra, dataDir: lostDir };
  const node = await startPoolHarness(env, {}, shared);
  const projectId = randomUUID();
  const browser = await create(node, projectId);
  const read = () => survivor.client.getBrowser({ projectId, browserId: browser.id });

  // Alive, the node keeps its browser, however long: a live node is never taken for gone.
  await sleep(3_000);
  expect(await read()).toMatchObject({ status: "active" });
  await expect(create(survivor, projectId)).rejects.toMatchObject({ kind: "limit_exceeded" });

  await node.close();
  expect(await chromiumIdsIn(lostDir)).toEqual([browser.id]);
  const stopped = await eventually(async () => {
    const view = await read();
    return view.status === "stopped" ? view : undefined;
  });
  expect(stopped).toMatchObject({
    stopReason: "crash",
    finishedAt: expect.anything(),
  });
  // The project may run a browser again, on the node that is left.
  const next = await create(survivor, projectId);
  await survivor.client.stopBrowser({ projectId, browserId: next.id });

  // Back after all, the node adopts nothing and ends the Chromium it had left running.
  const back = await startPoolHarness(env, {}, shared);
  try {
    expect(back.service.liveBrowserIds()).toEqual([]);
    expect(await chromiumIdsIn(lostDir)).toEqual([]);
  } finally {
    await back.close();
  }
});
