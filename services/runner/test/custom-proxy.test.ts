import { browserPool, runs } from "@bas/proto";
import { connectClient, createGrpcServer, type GrpcServer, unaryService } from "@bas/service-kit";
import { type Harness, newProject, startHarness } from "../../sessions/test/harness";
import { connectBrowserPool } from "../src/adapters/grpc/browser-pool-client";
import { connectSessionReports } from "../src/adapters/grpc/session-reports";
import type { Attempt } from "../src/app/attempt";
import { openBrowser } from "../src/app/attempt-sandbox";
import type { BrowserDriver } from "../src/app/browser-driver";
import type { TaskWorkerDeps } from "../src/app/task-worker";

// A real sessions service (NATS, Postgres) and, where browser-pool listens, a server that only records what the
// runner asks it for: the request is what this test is about, not the browser.
let h: Harness;
let pool: GrpcServer;
let poolAddress: string;
const acquires: browserPool.AcquireBrowserRequest[] = [];
beforeAll(async () => {
  h = await startHarness();
  pool = createGrpcServer();
  const handlers = unaryService({
    acquireBrowser: async (req: browserPool.AcquireBrowserRequest) => {
      acquires.push(req);
      return browserPool.AcquiredBrowser.fromPartial({
        browser: { id: "browser-1" },
        internalCdpUrl: "ws://127.0.0.1:9/devtools/browser/x",
      });
    },
  });
  pool.add(browserPool.BrowserPoolService, handlers as unknown as browserPool.BrowserPoolServer);
  poolAddress = `127.0.0.1:${await pool.listen("127.0.0.1", 0)}`;
});
afterAll(async () => {
  await pool?.close(0);
  await h?.close();
});

const PROXY = { host: "proxy.example", port: 3128, ignoreCertErrors: true };
const CREDENTIALS = { username: "proxy-user-Kd83", password: "proxy-pass-Wq71!unique" };

test("the acquire request that reaches browser-pool carries the run's proxy credentials, fetched from the sessions service", async () => {
  const address = `127.0.0.1:${h.service.grpcPort}`;
  const api = connectClient(runs.RunsClient, address);
  const reports = connectSessionReports(address, { graceMs: 2_000 });
  const browsers = connectBrowserPool(poolAddress);
  try {
    const run = await api.createRun(
      runs.CreateRunRequest.fromPartial({
        projectId: newProject(),
        task: "Open the page through my proxy",
        model: "svc-max",
        browser: { customProxy: { ...PROXY, ...CREDENTIALS } },
      }),
    );
    const assignment = await h.takeAssignment();
    expect(assignment.taskId).toBe(run.id);
    expect(JSON.stringify(assignment)).not.toContain(CREDENTIALS.password);

    // The attempt's own path to the browser, wired as service.ts wires it.
    const deps: Pick<TaskWorkerDeps, "reports" | "acquireBrowser" | "connectBrowser"> = {
      reports,
      acquireBrowser: (a, settings) => browsers.acquire(a.projectId, a.sessionId, settings, a.reopened === true),
      connectBrowser: async () => ({}) as BrowserDriver,
    };
    const attempt = { assignment, deps, waitOut: (_dependency: string, fn: () => unknown) => fn() };
    const opened = await openBrowser(attempt as unknown as Attempt);
    expect(opened.acquired).toMatchObject({ browserId: "browser-1" });
    expect(acquires).toHaveLength(1);
    expect(acquires[0]).toMatchObject({ projectId: assignment.projectId, sessionId: run.sessionId });
    expect(acquires[0].settings?.customProxy).toEqual({ ...PROXY, ...CREDENTIALS });
    // The assignment itself is left as it came: the credentials went into the request only.
    expect(JSON.stringify(assignment)).not.toContain(CREDENTIALS.password);

    // Once the run has ended its credentials are gone: a browser is still asked for, without them.
    await h.reports.taskCompleted({ sessionId: run.sessionId, taskId: run.id, output: "done", success: true });
    await openBrowser(attempt as unknown as Attempt);
    expect(acquires).toHaveLength(2);
    expect(acquires[1].settings?.customProxy).toEqual(PROXY);
  } finally {
    api.close();
    reports.close();
    browsers.close();
  }
});
