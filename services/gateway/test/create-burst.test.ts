import { type Reply, type Stack, startStack } from "./harness";

// A burst of creates once drained the sessions service's connection pool: every create answered 503 after 10 s,
// every session call of every project went on answering 503 for minutes, and creates that answered 503 still made
// sessions. Now each project's creates queue on that project's lock alone and answer at once.
const LIMIT = 10;
const PROJECTS = 5;
const PER_PROJECT = 40;

let stack: Stack;
beforeAll(async () => {
  // What is asserted is the count, not the latency: a loaded machine may take longer than the default deadline to
  // work 40 creates through one project's lock, and a create past its deadline rightly answers 503.
  stack = await startStack({
    env: { GRPC_DEADLINE_MS: "120000" },
    sessionsEnv: { MAX_ACTIVE_SESSIONS_PER_PROJECT: String(LIMIT) },
  });
});
afterAll(() => stack.close());

const create = (key: string) =>
  stack.request("POST", "/api/v3/sessions", { key, body: { task: "Find the top story" } });

test("200 simultaneous creates across 5 projects: each project gets exactly its limit, the rest a 429 that says why, and only what was answered 200 exists", async () => {
  const keys = await Promise.all(Array.from({ length: PROJECTS }, () => stack.newProjectKey()));
  const replies: Reply[][] = await Promise.all(
    keys.map((key) => Promise.all(Array.from({ length: PER_PROJECT }, () => create(key)))),
  );

  for (const [i, key] of keys.entries()) {
    const statuses = replies[i].map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(LIMIT).fill(200), ...Array(PER_PROJECT - LIMIT).fill(429)]);
    for (const refused of replies[i].filter((r) => r.status === 429)) {
      expect(refused.body.detail).toMatch(
        new RegExp(
          `^Too many concurrent active sessions\\. The project has ${LIMIT} active sessions \\(limit ${LIMIT}\\)`,
        ),
      );
    }
    const created = replies[i].filter((r) => r.status === 200).map((r) => r.body.id);
    const listed = await stack.request("GET", "/api/v3/sessions?page_size=100", { key });
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(LIMIT);
    expect(listed.body.sessions.map((s: { id: string }) => s.id).sort()).toEqual([...created].sort());
  }

  // Every project is still served at once: a read, and a project untouched by the burst creates.
  const read = await stack.request("GET", `/api/v3/sessions/${replies[0].find((r) => r.status === 200)!.body.id}`, {
    key: keys[0],
  });
  expect(read.status).toBe(200);
  expect((await create(await stack.newProjectKey())).status).toBe(200);
  expect((await stack.request("GET", "/healthz", { key: null })).body.checks.sessions).toBe("ok");
});
