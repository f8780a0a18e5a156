import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type AgentStack, startAgentStack } from "../../../test/e2e/support/agent-stack";

const BAS = resolve(__dirname, "../../../node_modules/.bin/bas");

// Each `bas` call is a process of its own that loads the CLI (0.6-0.8 s on an idle 2-core machine, several times that
// beside the rest of the suite), and a test makes up to a dozen: the time they take is not what is tested here.
jest.setTimeout(240_000);

let stack: AgentStack;
let dataDir: string;
beforeAll(async () => {
  stack = await startAgentStack();
  // What `npm start` leaves for the command line: the CLI finds the stack through it, nothing sourced.
  dataDir = mkdtempSync(join(tmpdir(), "bas-cli-"));
  writeFileSync(
    join(dataDir, "stack.env"),
    Object.entries(stack.grpc)
      .map(([name, value]) => `${name}=${value}`)
      .join("\n"),
  );
});
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npx bas ...` as a user runs it, from a folder of their own. */
function bas(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const { GATEWAY_ADDR: _g, RUNNER_ADDR: _r, BILLING_ADDR: _b, DATABASE_URL: _d, ...inherited } = process.env;
  return new Promise((done) => {
    execFile(
      BAS,
      args,
      { cwd: dataDir, env: { ...inherited, DATA_DIR: dataDir, ...env }, timeout: 60_000 },
      (e, out, err) =>
        done({
          code: e ? Number((e as { code?: number }).code ?? 1) : 0,
          out,
          // A call that hangs is killed: its failure says so rather than showing an empty answer.
          err: e?.killed ? `${err}\n[bas ${args.join(" ")}: killed after 60 s]` : err,
        }),
    );
  });
}

test("help at every level; an unknown command exits 2 with the help of its level", async () => {
  for (const args of [["help"], ["--help"], ["help", "projects"], ["projects", "help"], ["projects", "--help"]]) {
    const run = await bas(args);
    expect(run.code).toBe(0);
    expect(run.out).toContain("Usage: bas");
  }
  expect((await bas(["help", "billing"])).out).toContain("set-credit <project> <usd>");
  const unknown = await bas(["frobnicate"]);
  expect(unknown.code).toBe(2);
  expect(unknown.err).toContain("unknown command 'frobnicate'");
  expect(unknown.err).toContain("provider-keys");
  const unknownAction = await bas(["provider-keys", "frobnicate"]);
  expect(unknownAction.code).toBe(2);
  expect(unknownAction.err).toContain("check [options] <project>");
});

test("projects and API keys by name or id: a key made here works at once and stops working when revoked", async () => {
  const project = JSON.parse((await bas(["projects", "create", "from-cli", "--json"])).out);
  expect((await bas(["projects", "list"])).out).toContain(`${project.id}  from-cli`);
  expect(JSON.parse((await bas(["projects", "show", project.id, "--json"])).out).name).toBe("from-cli");

  const created = JSON.parse((await bas(["api-keys", "create", "from-cli", "--label", "laptop", "--json"])).out);
  expect(created.key).toMatchObject({ projectId: project.id, label: "laptop" });
  expect((await stack.request("GET", "/api/v3/sessions", undefined, created.plainKey)).status).toBe(200);
  const listed = await bas(["api-keys", "list", project.id]);
  // The whole answer, so that a failure shows the command's stderr too.
  expect(listed).toMatchObject({ code: 0, out: expect.stringContaining(created.key.prefix) });
  expect(listed.out).not.toContain(created.plainKey);
  expect((await bas(["api-keys", "revoke", created.key.id])).code).toBe(0);
  expect((await stack.request("GET", "/api/v3/sessions", undefined, created.plainKey)).status).toBe(401);
});

test("provider keys and credit take a project's name; an unknown project is refused and nothing is stored", async () => {
  await bas(["projects", "create", "keys-and-credit"]);
  const set = await bas(["provider-keys", "set", "keys-and-credit", "--provider", "anthropic"], {
    PROVIDER_API_KEY: "sk-ant-cli-key-9876",
  });
  expect(set.code).toBe(0);
  expect(set.out).toContain("anthropic  …9876");
  expect(set.out).not.toContain("sk-ant-cli-key");
  expect((await bas(["provider-keys", "list", "keys-and-credit"])).out).toContain("anthropic  …9876");
  expect((await bas(["provider-keys", "check", "keys-and-credit", "--model", "svc-max"])).out).toContain(
    "provider 'default': no key is stored",
  );

  const refused = await bas(["provider-keys", "set", "default-typo"], { PROVIDER_API_KEY: "sk-should-not-be-kept" });
  expect(refused.code).toBe(1);
  expect(refused.err).toContain("no project named or with id 'default-typo'");
  const nowhere = await bas(["billing", "totals", "no-such-project"]);
  expect(nowhere.code).toBe(1);
  expect(nowhere.err).toContain("no project named or with id 'no-such-project'");

  expect((await bas(["billing", "set-credit", "keys-and-credit", "25"])).out).toContain("limit $25");
  expect(JSON.parse((await bas(["billing", "credit", "keys-and-credit", "--json"])).out)).toMatchObject({
    limitUsd: "25",
    spentUsd: "0",
  });
  expect((await bas(["billing", "set-credit", "keys-and-credit", "lots"])).err).toContain("is not an amount in USD");
  expect((await bas(["runner", "status"])).out).toMatch(/^\d+ active task/);
});

test("webhooks: add prints the secret once; list, deliveries (the test event, still trying) and remove", async () => {
  await bas(["projects", "create", "hooked"]);
  // A public address: registered as is (this machine has no route to it, so its deliveries keep failing).
  const added = await bas(["webhooks", "add", "hooked", "http://93.184.216.34/hooks", "--json"]);
  expect(added.code).toBe(0);
  const created = JSON.parse(added.out);
  expect(created.secret).toMatch(/^whsec_/);
  const list = await bas(["webhooks", "list", "hooked"]);
  expect(list.out).toContain(`${created.endpoint.id}  http://93.184.216.34/hooks`);
  expect(list.out).not.toContain(created.secret);
  const deliveries = (await bas(["webhooks", "deliveries", "hooked", created.endpoint.id])).out;
  expect(deliveries).toMatch(/ test {2}pending {2}/);
  const [, testDelivery] = deliveries.split(/\s+/);
  const early = await bas(["webhooks", "resend", "hooked", created.endpoint.id, testDelivery]);
  expect([early.code, early.err]).toEqual([1, expect.stringContaining("still pending")]);
  const rotated = JSON.parse((await bas(["webhooks", "rotate-secret", "hooked", created.endpoint.id, "--json"])).out);
  expect(rotated.secret).toMatch(/^whsec_/);
  expect(rotated.secret).not.toBe(created.secret);
  const chosen = await bas(["webhooks", "add", "hooked", "http://93.184.216.34/runs", "--events", "run.status_update"]);
  expect(chosen.code).toBe(0);
  expect((await bas(["webhooks", "list", "hooked"])).out).toMatch(/runs {2}run\.status_update\n/);
  const chosenId = chosen.out.split(/\s+/)[0];
  const moved = await bas([
    "webhooks",
    "update",
    "hooked",
    chosenId,
    "--url",
    "http://93.184.216.34/all",
    "--events",
    "all",
  ]);
  expect(moved.out).toBe(`${chosenId}  http://93.184.216.34/all  every event\n`);
  const narrowed = await bas(["webhooks", "update", "hooked", chosenId, "--events", "agent.task.status_update"]);
  expect(narrowed.out).toBe(`${chosenId}  http://93.184.216.34/all  agent.task.status_update\n`);
  const nothing = await bas(["webhooks", "update", "hooked", chosenId]);
  expect([nothing.code, nothing.err]).toEqual([1, expect.stringContaining("give url, events or both")]);
  await bas(["webhooks", "remove", "hooked", chosenId]);
  const refused = await bas(["webhooks", "add", "hooked", "http://127.0.0.1:9/x"]);
  expect(refused.code).toBe(1);
  expect(refused.err).toContain("127.0.0.1:9 is a loopback address; open it with WEBHOOK_EGRESS_ALLOW");
  expect((await bas(["webhooks", "remove", "hooked", created.endpoint.id])).out).toContain("removed");
  expect((await bas(["webhooks", "list", "hooked"])).out).toContain("no webhooks");
});

test("without a stack to find, it says where it looked and what to do", async () => {
  const empty = mkdtempSync(join(tmpdir(), "bas-cli-empty-"));
  try {
    const run = await bas(["projects", "list"], { DATA_DIR: empty });
    expect(run.code).toBe(1);
    expect(run.err).toContain("no local stack found");
    expect(run.err).toContain("npm start");
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});
