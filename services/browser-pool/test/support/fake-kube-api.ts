import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, connect, type Server } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { createLocalDriver } from "../../src/adapters/local/local-driver";
import type { V1Pod } from "../../src/adapters/kubernetes/kube-api";
import type { RunningBrowser } from "../../src/domain/browser-driver";
import { createNumberPool } from "../../src/domain/number-pool";

/**
 * A stand-in for the parts of the Kubernetes API the pod driver calls (pods: create, read, list by label, watch one,
 * delete), speaking the API's JSON and watch-stream formats. Its "kubelet" runs each pod's Chromium as a real local
 * process, reachable on a pod IP of its own (127.0.0.N) at the container's DevTools port, like a pod on a cluster.
 * Not a cluster: no scheduling, images, probes or network policy; the pod's image is ignored.
 */
export interface FakeKubeApi {
  url: string;
  pods(): V1Pod[];
  /** NetworkPolicies applied (as the API received them). */
  networkPolicies(): unknown[];
  /** What the API received, in order (method and path). */
  calls: string[];
  /** Makes the next pods never become Ready (a broken image). */
  failNextPods(count: number): void;
  /** The pod's container dies (phase Failed), as when Chromium crashes inside it. */
  crash(name: string): Promise<void>;
  /** Puts a pod there as if an earlier replica had created it (its Chromium running). */
  seed(pod: V1Pod): Promise<void>;
  close(): Promise<void>;
}

interface PodRecord {
  pod: V1Pod;
  browser?: RunningBrowser;
  forwarder?: Server;
  podNetwork?: Server;
}

export async function startFakeKubeApi(options: { devtoolsPort: number }): Promise<FakeKubeApi> {
  const root = mkdtempSync(join(tmpdir(), "bas-fake-kubelet-"));
  const kubelet = createLocalDriver({
    chromiumPath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    root,
    users:
      process.getuid?.() === 0 ? createNumberPool({ first: 300_000, count: 100, what: "kubelet user ids" }) : undefined,
    noSandbox: false,
    // A real cold launch on a loaded 2-core machine; a broken launch still fails, only later.
    launchTimeoutMs: 60_000,
  });
  const policies: unknown[] = [];
  const records = new Map<string, PodRecord>();
  const watchers = new Set<{ name: string; res: ServerResponse }>();
  const calls: string[] = [];
  let failing = 0;
  let nextIp = 2;
  let version = 1;

  const emit = (type: string, pod: V1Pod) => {
    for (const w of watchers)
      if (w.name === pod.metadata?.name && !w.res.writableEnded)
        w.res.write(`${JSON.stringify({ type, object: pod })}\n`);
  };
  const touch = (pod: V1Pod) => {
    pod.metadata!.resourceVersion = String(++version);
  };

  async function run(record: PodRecord) {
    const pod = record.pod;
    if (failing > 0) {
      failing--;
      return; // Stays Pending: the image never starts.
    }
    const args = pod.spec!.containers[0].args ?? [];
    const size = args
      .find((a) => a.startsWith("--window-size="))
      ?.split("=")[1]
      .split(",")
      .map(Number) ?? [1920, 1080];
    // The "pod network": the sandboxed browser's egress socket leads to the replica's proxy port.
    const proxy = new URL(args.find((a) => a.startsWith("--proxy-server="))!.split("=")[1]);
    const browserId = pod.metadata!.labels!["bas.dev/browser-id"] ?? randomUUID();
    const egress = await kubelet.egressAddress(browserId);
    const podNetwork = createTcpServer((socket) => splice(socket, connect(Number(proxy.port), proxy.hostname)));
    await new Promise<void>((resolve) => podNetwork.listen((egress as { path: string }).path, resolve));
    const browser = await kubelet.launch({ browserId, screenWidth: size[0], screenHeight: size[1], egress });
    if (!records.has(pod.metadata!.name!)) {
      await browser.kill();
      podNetwork.close();
      return;
    }
    const ip = `127.0.0.${nextIp++}`;
    const handle = browser.handle as { devtoolsSocket: string };
    const forwarder = createTcpServer((socket) => {
      const upstream = connect(handle.devtoolsSocket);
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      forwarder.once("error", reject);
      forwarder.listen(options.devtoolsPort, ip, resolve);
    });
    record.browser = browser;
    record.forwarder = forwarder;
    record.podNetwork = podNetwork;
    pod.status = {
      phase: "Running",
      podIP: ip,
      conditions: [{ type: "Ready", status: "True" }],
    };
    touch(pod);
    emit("MODIFIED", pod);
  }

  async function remove(name: string) {
    const record = records.get(name);
    if (!record) return;
    records.delete(name);
    record.forwarder?.close();
    record.podNetwork?.close();
    await record.browser?.kill();
    record.pod.metadata!.deletionTimestamp = new Date();
    touch(record.pod);
    emit("DELETED", record.pod);
  }

  const notFound = (res: ServerResponse, name: string) =>
    send(res, 404, {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: `pods "${name}" not found`,
      reason: "NotFound",
      code: 404,
    });

  const matches = (pod: V1Pod, selector: string | null) =>
    !selector ||
    selector.split(",").every((term) => {
      const [k, v] = term.split("=");
      return pod.metadata?.labels?.[k] === v;
    });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url!, "http://x");
    calls.push(`${req.method} ${url.pathname}`);
    const policy = /^\/apis\/networking.k8s.io\/v1\/namespaces\/[^/]+\/networkpolicies(\/[^/]+)?$/.exec(url.pathname);
    if (policy && req.method === "PUT") return send(res, 404, { kind: "Status", code: 404, reason: "NotFound" });
    if (policy && req.method === "POST") {
      const created = JSON.parse(await body(req));
      policies.push(created);
      return send(res, 201, created);
    }
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m) return send(res, 404, { kind: "Status", code: 404, message: "not found" });
    const [, namespace, name] = m;
    if (req.method === "POST" && !name) {
      const pod = JSON.parse(await body(req)) as V1Pod;
      const podName = pod.metadata!.name!;
      if (records.has(podName)) return send(res, 409, { kind: "Status", code: 409, reason: "AlreadyExists" });
      pod.metadata = { ...pod.metadata, namespace, uid: randomUUID(), creationTimestamp: new Date() };
      pod.status = { phase: "Pending" };
      touch(pod);
      const record = { pod };
      records.set(podName, record);
      send(res, 201, pod);
      // A kubelet that cannot start the pod reports it Failed, which the driver sees at once.
      run(record).catch(() => {
        pod.status = { phase: "Failed", conditions: [{ type: "Ready", status: "False" }] };
        touch(pod);
        emit("MODIFIED", pod);
      });
      return;
    }
    if (req.method === "GET" && name) {
      const record = records.get(name);
      return record ? send(res, 200, record.pod) : notFound(res, name);
    }
    if (req.method === "GET" && url.searchParams.get("watch") === "true") {
      const field = url.searchParams.get("fieldSelector")?.replace("metadata.name=", "") ?? "";
      res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
      const watcher = { name: field, res };
      watchers.add(watcher);
      const current = records.get(field)?.pod;
      if (current) res.write(`${JSON.stringify({ type: "ADDED", object: current })}\n`);
      req.on("close", () => watchers.delete(watcher));
      return;
    }
    if (req.method === "GET") {
      const items = [...records.values()]
        .map((r) => r.pod)
        .filter((p) => matches(p, url.searchParams.get("labelSelector")));
      return send(res, 200, {
        kind: "PodList",
        apiVersion: "v1",
        metadata: { resourceVersion: String(version) },
        items,
      });
    }
    if (req.method === "DELETE" && name) {
      const record = records.get(name);
      if (!record) return notFound(res, name);
      await remove(name);
      return send(res, 200, record.pod);
    }
    return send(res, 405, { kind: "Status", code: 405 });
  }

  const server = createServer(
    (req, res) => void handle(req, res).catch((err) => send(res, 500, { message: String(err) })),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    calls,
    pods: () => [...records.values()].map((r) => r.pod),
    networkPolicies: () => [...policies],
    failNextPods(count) {
      failing = count;
    },
    async crash(name) {
      const record = records.get(name);
      if (!record) return;
      record.forwarder?.close();
      record.podNetwork?.close();
      await record.browser?.kill();
      record.pod.status = { phase: "Failed", conditions: [{ type: "Ready", status: "False" }] };
      touch(record.pod);
      emit("MODIFIED", record.pod);
    },
    async seed(pod) {
      const record = { pod: { ...pod, metadata: { ...pod.metadata, uid: randomUUID() } } };
      records.set(pod.metadata!.name!, record);
      await run(record);
    },
    async close() {
      for (const w of watchers) w.res.end();
      for (const name of [...records.keys()]) await remove(name);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function splice(a: import("node:net").Socket, b: import("node:net").Socket) {
  a.pipe(b).pipe(a);
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = "";
    req.on("data", (c) => {
      data += c;
    });
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, payload: unknown) {
  if (res.headersSent) return;
  const text = JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
