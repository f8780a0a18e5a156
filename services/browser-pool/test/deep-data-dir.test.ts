import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestInfra, type TestInfra } from "@bas/testing";
import puppeteer from "puppeteer-core";
import { type PoolHarness, startPoolHarness } from "./support/pool-harness";

// A Unix socket path has at most 107 bytes; a checkout deep in a home folder easily makes DATA_DIR longer than that
// leaves room for (the browsers' sockets live under it).
let base: string;
let infra: TestInfra;
let h: PoolHarness;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "bas-deep-"));
  const dataDir = join(
    base,
    "home",
    "someone",
    "projects",
    "browser-agent-service",
    ".data",
    "browsers",
    "x".repeat(30),
  );
  mkdirSync(dataDir, { recursive: true });
  infra = await createTestInfra();
  h = await startPoolHarness({}, {}, { infra, dataDir });
});
afterAll(async () => {
  await h?.close();
  await infra?.close();
  rmSync(base, { recursive: true, force: true });
});

test("browsers work however deep the data folder is", async () => {
  expect(h.dataDir.length).toBeGreaterThan(107);
  const created = await h.client.createBrowser({
    projectId: randomUUID(),
    settings: undefined,
    timeoutMinutes: 0,
    metadata: {},
  });
  const browser = await puppeteer.connect({ browserWSEndpoint: created.cdpUrl });
  try {
    const page = await browser.newPage();
    expect(await page.evaluate(() => 6 * 7)).toBe(42);
  } finally {
    await browser.disconnect();
  }
});
