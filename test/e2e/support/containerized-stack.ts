import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { findEngine, TARGETS } from "@bas/containers";
import { freePort, waitForExit, waitForLine } from "@bas/embedded-infra";
import { stackNameOf } from "../../../packages/local-stack/src/containers";
import { buildImagesOnce } from "../../../services/browser-pool/test/support/container-engine";
import { type FixtureSites, startFixtureSites } from "../../fixtures/sites";
import { type ScriptedLlm, startScriptedLlm } from "../../support/scripted-llm";

const ROOT = resolve(__dirname, "../../..");

/** What a caller of the service has: its base URL and a key; the scripted model and the fixture sites beside it. */
export interface CallerStack {
  baseUrl: string;
  apiKey: string;
  llm: ScriptedLlm;
  sites: FixtureSites;
  close(): Promise<void>;
}

/**
 * `npm run start:containers` from this checkout: NATS, Postgres and the five services each a container of the images
 * built from it (first, by `npm run images`' code), on this host's network, with the scripted model and the fixture
 * sites on its loopback as a user's own model and sites would be. `close` sends SIGTERM, as Ctrl-C does, and fails
 * unless the launcher ends cleanly and leaves no container; the stack's volumes are then removed.
 */
export async function startContainerizedStack(log: (line: string) => void): Promise<CallerStack> {
  const engine = findEngine();
  await buildImagesOnce(engine, TARGETS, log);
  const [sites, llm] = await Promise.all([startFixtureSites({ spaDelayMs: 300 }), startScriptedLlm()]);
  const dataDir = mkdtempSync(join(tmpdir(), "bas-e2e-containers-"));
  const stack = stackNameOf(dataDir);
  const port = await freePort();
  const apiKey = `bas_e2e_${randomBytes(16).toString("hex")}`;
  const { NATS_URL: _nats, DATABASE_URL: _db, ...hostEnv } = process.env;
  // The README's command, minus npm: the same entry file. No NATS_URL or DATABASE_URL: it runs its own, in containers.
  const launcher: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "packages/local-stack/src/main.ts", "--containers"],
    {
      cwd: ROOT,
      env: {
        ...hostEnv,
        DATA_DIR: dataDir,
        PORT: String(port),
        BOOTSTRAP_API_KEY: apiKey,
        LLM_BASE_URL: llm.url,
        LLM_API_KEY: "service-key",
        BROWSER_EGRESS_ALLOW: new URL(sites.url).host,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const leftovers = async () =>
    (await engine.exec(["ps", "--all", "--quiet", "--filter", `label=io.bas.stack=${stack}`])).trim();
  async function cleanUp() {
    await engine.exec(["rm", "--force", ...(await leftovers()).split("\n").filter(Boolean)]).catch(() => undefined);
    await engine.exec(["volume", "rm", "--force", `${stack}-nats`, `${stack}-postgres`]).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    await Promise.all([sites.close(), llm.close()]);
  }
  try {
    await waitForLine(launcher, /API key:\s+\S+/, 300_000, "npm run start:containers");
  } catch (err) {
    launcher.kill("SIGKILL");
    await cleanUp();
    throw err;
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey,
    llm,
    sites,
    async close() {
      try {
        launcher.kill("SIGTERM");
        await waitForExit(launcher, 60_000);
        expect(launcher.exitCode).toBe(0);
        expect(await leftovers()).toBe("");
      } finally {
        await cleanUp();
      }
    },
  };
}
