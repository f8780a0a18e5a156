import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sessions } from "@bas/proto";
import { connectClient, createGrpcServer, type GrpcServer, type Logger } from "@bas/service-kit";
import { eventually } from "@bas/testing";
import pino from "pino";
import { createHttpApp, type HttpAppOptions } from "./create-app";
import type { GatewayDeps } from "./gateway-deps";
import { defineRoute } from "./route";

/** What the gateway logged, as pino's JSON lines (level 20 debug, 50 error). */
const lines: { level: number; msg: string }[] = [];
const log = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) }) as Logger;

// A sessions service that takes calls and never answers, so the caller can hang up while the gateway waits on it.
let grpc: GrpcServer;
let client: ReturnType<typeof connectClient<InstanceType<typeof sessions.SessionsClient>>>;
let callReached: () => void;
let http: Server;
let baseUrl: string;

beforeAll(async () => {
  grpc = createGrpcServer();
  grpc.add(sessions.SessionsService, { getSession: () => callReached() });
  const grpcPort = await grpc.listen("127.0.0.1", 0);
  client = connectClient(sessions.SessionsClient, `127.0.0.1:${grpcPort}`);
  const routes = [
    defineRoute({
      method: "get",
      path: "/waits-on-sessions",
      auth: "public",
      operationId: "waitsOnSessions",
      summary: "Reads a session from a service that never answers",
      responses: { 200: { description: "never" } },
      async handler({ signal }) {
        return { body: await client.getSession({ projectId: "p", sessionId: "s" }, { signal }) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/fails",
      auth: "public",
      operationId: "fails",
      summary: "A fault of ours",
      responses: { 200: { description: "never" } },
      async handler() {
        throw new Error("the database said no");
      },
    }),
  ];
  const app = createHttpApp(routes, { log } as GatewayDeps, { maxBodyBytes: 1024 } as HttpAppOptions);
  http = createServer(app.callback());
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
afterAll(async () => {
  client.close();
  await grpc.close(100);
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});
beforeEach(() => {
  lines.length = 0;
});

test("a caller that hangs up while the gateway waits on a service is a debug line, not an error", async () => {
  const reached = new Promise<void>((resolve) => {
    callReached = resolve;
  });
  const req = request(`${baseUrl}/waits-on-sessions`);
  req.on("error", () => undefined);
  req.end();
  await reached;
  req.destroy();
  const logged = await eventually(
    async () => lines,
    // Whatever the gateway makes of it, it logs one line about the request.
    (all) => all.some((l) => (l as { path?: string }).path === "/waits-on-sessions"),
  );
  expect(logged.filter((l) => l.msg === "client closed the request")).toEqual([
    expect.objectContaining({ level: 20, method: "GET", path: "/waits-on-sessions" }),
  ]);
  expect(logged.filter((l) => l.level >= 40)).toEqual([]);
});

test("a fault of ours is still logged at error level, and answered 500 without its details", async () => {
  const res = await fetch(`${baseUrl}/fails`);
  expect(res.status).toBe(500);
  expect(await res.json()).toEqual({ detail: "Internal server error" });
  expect(lines.filter((l) => l.level >= 50)).toEqual([
    expect.objectContaining({
      msg: "request failed",
      err: expect.objectContaining({ message: "the database said no" }),
    }),
  ]);
});
