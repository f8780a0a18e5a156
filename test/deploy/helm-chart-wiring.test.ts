import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { browserNetworkPolicy, egressPortCount } from "@bas/browser-pool/src/adapters/kubernetes/network-policy";
import { browserPodManifest } from "@bas/browser-pool/src/adapters/kubernetes/pod-manifest";
import { cdpUrlFor, liveUrlFor, parseCdpRoute, parseLiveRoute } from "@bas/browser-pool/src/domain/cdp-route";
import type { BrowserPoolConfig } from "@bas/browser-pool";
import type { SessionsConfig } from "@bas/sessions";
import { loadModelCatalog } from "@bas/models";
import {
  componentOf,
  containerPort,
  isHook,
  labelsMatch,
  type Manifest,
  named,
  ofKind,
  podTemplates,
  renderChart,
  workloadOf,
} from "./support/chart";
import { routeRequest } from "./support/ingress-nginx";
import { mayConnect, type PodRef, selects } from "./support/network-policies";
import { LOADERS, requiredVariables, resolveEnv, variablesRead, withMountedFiles } from "./support/service-env";
import { externalSecrets, RENDERS, SERVICES } from "./renders";

/**
 * How the chart's objects fit together and with the services' code: each service's environment against its config
 * schema, gRPC addresses, the ingress routes of REST, cdpUrl and live view, and the network paths NetworkPolicies
 * leave open (browser-pool's own policy for browser pods included).
 */

const BROWSER_ID = "0b6a8d0e-3c1f-4f4e-9d55-2a7c8e1f9b10";
const CDP_SECRET = "s3cr3t-s3cr3t-s3cr3t-abc";
const rendered: Record<string, Manifest[]> = {};
let scratch: string;
let external: Record<string, Record<string, string>>;

beforeAll(async () => {
  for (const [name, options] of Object.entries(RENDERS)) rendered[name] = renderChart(options);
  scratch = mkdtempSync(join(tmpdir(), "bas-chart-"));
  external = await externalSecrets();
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface RunningPod extends PodRef {
  name: string;
  container: any;
  env: Record<string, string>;
}

/**
 * A pod of a component as it would run: its name, labels, named ports and environment, its mounted Secrets and
 * ConfigMaps written under the scratch folder (the paths in its environment lead there).
 */
function podOf(manifests: Manifest[], namespace: string, component: string, ordinal = 0): RunningPod {
  const { owner, labels, spec } = workloadOf(manifests, component);
  const stateful = owner.kind === "StatefulSet";
  const name = stateful ? `${owner.metadata.name}-${ordinal}` : `${owner.metadata.name}-5d8f9c7b6-x2x9q`;
  const container = spec.containers[0];
  const facts = { name, namespace, uid: "5b7a3c1e-0000-4000-8000-000000000001", podIP: "10.1.2.3" };
  const root = join(scratch, namespace, name);
  const env = withMountedFiles(
    resolveEnv(container, manifests, facts, external),
    container,
    spec.volumes ?? [],
    manifests,
    root,
    external,
  );
  return {
    name,
    namespace,
    labels: { ...labels, ...(stateful ? { "statefulset.kubernetes.io/pod-name": name } : {}) },
    ports: Object.fromEntries(container.ports.map((p: any) => [p.name, p.containerPort])),
    container,
    env,
  };
}

/** The container port a connection to `service`:`port` reaches in `pod` (undefined: the Service misses the pod). */
function throughService(manifests: Manifest[], service: string, port: string | number, pod: RunningPod) {
  const svc = named(manifests, "Service", service);
  if (!labelsMatch(svc.spec.selector, pod.labels)) return undefined;
  const servicePort = svc.spec.ports.find((p: any) => p.name === port || p.port === port);
  return servicePort && containerPort(pod.container, servicePort.targetPort);
}

describe.each(Object.keys(RENDERS))("with the %s values", (name) => {
  const manifests = () => rendered[name];
  const { namespace } = RENDERS[name];
  const pod = (component: string, ordinal = 0) => podOf(manifests(), namespace, component, ordinal);
  const ingresses = () => ofKind(manifests(), "Ingress");
  const tls = () => !!ingresses().find((i) => componentOf(i.metadata.labels) === "gateway")?.spec.tls;

  test.each(SERVICES)(
    "%s gets only variables its config schema reads, all it requires, and accepts them",
    (service) => {
      const { container, env } = pod(service);
      const names: string[] = container.env.map((e: any) => e.name);
      expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
      const read = variablesRead(service);
      expect(names.filter((n) => !read.has(n))).toEqual([]);
      expect(requiredVariables(service).filter((n) => !names.includes(n))).toEqual([]);
      expect(() => LOADERS[service](env)).not.toThrow();
    },
  );

  test("every *_ADDR leads to the gRPC port of every replica of the service it names, through a headless Service", () => {
    const targetOf = {
      SESSIONS_ADDR: "sessions",
      BROWSER_POOL_ADDR: "browser-pool",
      RUNNER_ADDR: "runner",
      BILLING_ADDR: "billing",
    };
    let checked = 0;
    for (const service of SERVICES) {
      for (const [key, address] of Object.entries(pod(service).env)) {
        if (!key.endsWith("_ADDR")) continue;
        const target = pod(targetOf[key as keyof typeof targetOf]);
        // dns:///name:port: the clients resolve the name to every pod it has, which only a headless Service gives.
        const [, host, port] = /^dns:\/\/\/([^:]+):(\d+)$/.exec(address) ?? [];
        expect([key, named(manifests(), "Service", host)?.spec.clusterIP]).toEqual([key, "None"]);
        expect([key, throughService(manifests(), host, Number(port), target)]).toEqual([
          key,
          Number(target.env.GRPC_PORT),
        ]);
        checked++;
      }
    }
    expect(checked).toBe(7); // gateway: 4, runner: 3
    // A create a full browser-pool replica refuses is tried on the others: the callers know how many there are.
    const replicas = workloadOf(manifests(), "browser-pool").owner.spec.replicas;
    for (const caller of ["gateway", "runner"]) expect(pod(caller).env.BROWSER_POOL_REPLICAS).toBe(String(replicas));
  });

  test("REST, a session's live view link included, goes to the gateway's HTTP port unchanged", () => {
    const gateway = pod("gateway");
    const publicUrl = gateway.env.PUBLIC_URL;
    expect(publicUrl).toMatch(tls() ? /^https:\/\// : /^http:\/\//);
    expect(pod("sessions").env.PUBLIC_URL).toBe(publicUrl);
    for (const path of ["/api/v4/runs", "/api/v3/sessions/abc", "/healthz", `/live/sessions/${BROWSER_ID}/tok`]) {
      const route = routeRequest(ofKind(manifests(), "Ingress"), `${publicUrl}${path}`);
      expect(route?.upstreamPath).toBe(path);
      expect(throughService(manifests(), route!.service, route!.port, gateway)).toBe(Number(gateway.env.PORT));
    }
  });

  test("each browser-pool replica's cdpUrl and liveUrl reach that replica's CDP port as paths its server serves", () => {
    const replicas = workloadOf(manifests(), "browser-pool").owner.spec.replicas;
    const ingressHost = new URL(pod("gateway").env.PUBLIC_URL).host;
    for (let ordinal = 0; ordinal < replicas; ordinal++) {
      const replica = pod("browser-pool", ordinal);
      expect(replica.env.NODE_ID).toBe(replica.name);
      // The CDP server rewrites /json answers to the public URL when the request's Host is its host.
      expect(new URL(replica.env.CDP_PUBLIC_URL).host).toBe(ingressHost);
      expect(replica.env.CDP_PUBLIC_URL).toMatch(tls() ? /^wss:\/\// : /^ws:\/\//);
      const cdpUrl = cdpUrlFor(replica.env.CDP_PUBLIC_URL, BROWSER_ID, CDP_SECRET);
      const liveUrl = liveUrlFor(cdpUrl)!;
      const requests: Array<[string, string]> = [
        [cdpUrl, "browser"],
        [`${cdpUrl}/json/version`, "json-version"],
        [`${cdpUrl}/devtools/page/6A1C0FFEE`, "target"],
        [liveUrl, "live-page"],
        [`${liveUrl}/ws`, "live-socket"],
      ];
      for (const [url, kind] of requests) {
        const route = routeRequest(ofKind(manifests(), "Ingress"), url.replace(/^ws/, "http"));
        expect([url, route?.service]).toEqual([url, replica.name]);
        expect(throughService(manifests(), route!.service, route!.port, replica)).toBe(Number(replica.env.CDP_PORT));
        for (const other of Array.from({ length: replicas }, (_, i) => i).filter((i) => i !== ordinal)) {
          expect(throughService(manifests(), route!.service, route!.port, pod("browser-pool", other))).toBeUndefined();
        }
        const served = parseCdpRoute(route!.upstreamPath) ?? parseLiveRoute(route!.upstreamPath);
        expect([url, served?.kind, served?.browserId]).toEqual([url, kind, BROWSER_ID]);
      }
    }
  });

  test("the runner reaches each replica's CDP port by its own name under the headless Service", () => {
    const replica = pod("browser-pool", 1);
    const internal = new URL(replica.env.CDP_INTERNAL_URL);
    const [podName, service, ns, svc] = internal.hostname.split(".");
    expect([podName, ns, svc]).toEqual([replica.name, namespace, "svc"]);
    expect(named(manifests(), "Service", service).spec.clusterIP).toBe("None");
    expect(throughService(manifests(), service, Number(internal.port), replica)).toBe(Number(replica.env.CDP_PORT));
  });

  test("the browsers' Ingress keeps WebSockets open an hour over HTTP/1.1, under the API's host and certificate", () => {
    const { service } = routeRequest(
      ingresses(),
      `${pod("gateway").env.PUBLIC_URL}/pool/${pod("browser-pool").name}/cdp/x`,
    )!;
    const browsers = ingresses().find((i) =>
      i.spec.rules[0].http.paths.some((p: any) => p.backend.service.name === service),
    )!;
    const annotations = browsers.metadata.annotations!;
    const nginx = (key: string) => annotations[`nginx.ingress.kubernetes.io/${key}`];
    expect(Number(nginx("proxy-read-timeout"))).toBeGreaterThanOrEqual(3600);
    expect(Number(nginx("proxy-send-timeout"))).toBeGreaterThanOrEqual(3600);
    expect(nginx("proxy-http-version")).toBe("1.1");
    expect(nginx("proxy-body-size")).toMatch(/^\d+[kmg]?$/);
    for (const ingress of ingresses()) {
      expect(ingress.spec.rules.map((r: any) => r.host)).toEqual([new URL(pod("gateway").env.PUBLIC_URL).hostname]);
      expect(ingress.spec.tls?.[0].hosts ?? []).toEqual(tls() ? ingress.spec.rules.map((r: any) => r.host) : []);
    }
  });

  test("browser pods run where the values put them: on chosen nodes, tolerating their taints, in a RuntimeClass", () => {
    const config = LOADERS["browser-pool"](pod("browser-pool").env) as BrowserPoolConfig;
    const placement = {
      nodeSelector: config.K8S_BROWSER_NODE_SELECTOR,
      tolerations: config.K8S_BROWSER_TOLERATIONS,
      runtimeClassName: config.K8S_BROWSER_RUNTIME_CLASS,
    };
    // ci/production-values.yaml sets all three; the other value sets none: any node.
    expect(placement).toEqual(
      name === "production"
        ? {
            nodeSelector: { "node-pool": "browsers-sandboxed" },
            tolerations: [{ key: "sandboxed", operator: "Equal", value: "true", effect: "NoSchedule" }],
            runtimeClassName: "gvisor",
          }
        : { nodeSelector: {}, tolerations: [], runtimeClassName: undefined },
    );
  });

  test("browser pods reach nothing but their replicas' egress proxies; each service only the peers it needs", () => {
    const pool = pod("browser-pool");
    const poolLabels = Object.fromEntries(pool.env.K8S_POOL_POD_LABELS.split(",").map((pair) => pair.split("=")));
    const egress = {
      first: Number(pool.env.K8S_EGRESS_PORT_BASE),
      count: egressPortCount(Number(pool.env.MAX_BROWSERS_PER_NODE), Number(pool.env.WARM_POOL_SIZE)),
    };
    // What browser-pool's driver applies and creates at run time, from the configuration the chart gives it.
    const driverPolicy = browserNetworkPolicy({
      namespace,
      deployment: pool.env.NAMESPACE,
      poolPodLabels: poolLabels,
      devtoolsPort: 9222,
      egressPorts: egress,
    });
    const browserPod = browserPodManifest({
      browserId: BROWSER_ID,
      namespace,
      nodeId: pool.name,
      deployment: pool.env.NAMESPACE,
      image: pool.env.K8S_BROWSER_IMAGE,
      devtoolsPort: 9222,
      screenWidth: 1280,
      screenHeight: 720,
      proxyServer: `http://${pool.env.K8S_PROXY_ADVERTISE_HOST}:${egress.first}`,
      resources: { cpu: pool.env.K8S_POD_CPU, memory: pool.env.K8S_POD_MEMORY },
    });
    const browser: PodRef = { namespace, labels: browserPod.metadata!.labels!, ports: { devtools: 9222 } };
    const policies = [...ofKind(manifests(), "NetworkPolicy"), driverPolicy];
    const may = (from: PodRef, to: PodRef, port: number | string) =>
      mayConnect(policies, from, to, typeof port === "number" ? port : to.ports![port]);

    expect(selects(driverPolicy.spec.podSelector, browser.labels)).toBe(true);
    expect(selects({ matchLabels: poolLabels }, pool.labels)).toBe(true);
    const last = egress.first + egress.count - 1;
    expect([egress.first, last].map((port) => may(browser, pool, port))).toEqual([true, true]);
    expect([egress.first - 1, last + 1].map((port) => may(browser, pool, port))).toEqual([false, false]);
    expect(may(pool, browser, "devtools")).toBe(true);

    const components = [
      ...SERVICES,
      ...podTemplates(manifests())
        .map((p) => componentOf(p.labels)!)
        .filter((c) => c === "nats" || c === "postgres"),
    ];
    for (const component of components) {
      const target = pod(component);
      for (const port of Object.keys(target.ports!))
        expect([component, port, may(browser, target, port)]).toEqual([component, port, false]);
    }

    const needed: Array<[string, string, string]> = [
      ["gateway", "sessions", "grpc"],
      ["gateway", "browser-pool", "grpc"],
      ["gateway", "runner", "grpc"],
      ["gateway", "billing", "grpc"],
      ["runner", "sessions", "grpc"],
      ["runner", "browser-pool", "grpc"],
      ["runner", "billing", "grpc"],
      ["runner", "browser-pool", "cdp"],
      ...components
        .filter((c) => c === "nats" || c === "postgres")
        .flatMap((store) =>
          SERVICES.map((s): [string, string, string] => [s, store, store === "nats" ? "client" : "postgres"]),
        ),
    ];
    for (const [from, to, port] of needed)
      expect([from, to, port, may(pod(from), pod(to), port)]).toEqual([from, to, port, true]);
    const foreign: PodRef = { namespace: "elsewhere", labels: { app: "curious" } };
    const refused: Array<[PodRef, string, string]> = [
      [pod("sessions"), "runner", "grpc"],
      [pod("billing"), "sessions", "grpc"],
      [pod("runner"), "gateway", "grpc"],
      [pod("browser-pool"), "sessions", "grpc"],
      [foreign, "sessions", "grpc"],
      [foreign, "browser-pool", "grpc"],
      ...components.filter((c) => c === "nats").map((c): [PodRef, string, string] => [foreign, c, "client"]),
    ];
    for (const [from, to, port] of refused)
      expect([from.labels, to, port, may(from, pod(to), port)]).toEqual([from.labels, to, port, false]);
    const helmTest = podTemplates(manifests()).find((p) => isHook(p.owner))!;
    expect(may({ namespace, labels: helmTest.labels }, pod("gateway"), "http")).toBe(true);
  });

  test("each service's metrics port is the METRICS_PORT it listens on, behind the port the ServiceMonitor names", () => {
    const monitored = ofKind(manifests(), "Service").filter((s) => s.metadata.labels?.["bas.dev/metrics"] === "true");
    expect(monitored.map((s) => componentOf(s.metadata.labels)).sort()).toEqual([...SERVICES].sort());
    for (const service of monitored) {
      const target = pod(componentOf(service.metadata.labels)!);
      expect(throughService(manifests(), service.metadata.name, "metrics", target)).toBe(
        Number(target.env.METRICS_PORT),
      );
    }
    for (const monitor of ofKind(manifests(), "ServiceMonitor")) {
      const selected = ofKind(manifests(), "Service").filter((s) =>
        labelsMatch(monitor.spec.selector.matchLabels, s.metadata.labels ?? {}),
      );
      expect(selected).toEqual(monitored);
      expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: "metrics", honorLabels: true })]);
    }
    if (name === "production") expect(ofKind(manifests(), "ServiceMonitor")).toHaveLength(1);
  });

  test("mail for the temporary mailboxes reaches the sessions' SMTP receiver, from outside too, for MAIL_DOMAIN", () => {
    const sessions = pod("sessions");
    const config = LOADERS.sessions(sessions.env) as SessionsConfig;
    expect(config.SMTP_HOST).toBe("0.0.0.0");
    const ofSessions = ofKind(manifests(), "Service").filter((s) => componentOf(s.metadata.labels) === "sessions");
    const inCluster = ofSessions.find((s) => s.metadata.labels?.["bas.dev/metrics"] === "true")!;
    expect(throughService(manifests(), inCluster.metadata.name, "smtp", sessions)).toBe(config.SMTP_PORT);
    const outside = ofSessions.filter((s) => s.metadata.name.endsWith("-smtp"));
    const host = pod("gateway").env.PUBLIC_URL.replace(/^https?:\/\//, "");
    if (name === "production") {
      // ci/production-values.yaml: a domain of its own, and a load balancer on port 25 for its MX record.
      expect(config.MAIL_DOMAIN).toBe("mail.agents.example.com");
      expect(outside).toHaveLength(1);
      expect(outside[0].spec).toMatchObject({ type: "LoadBalancer", externalTrafficPolicy: "Local" });
      expect(throughService(manifests(), outside[0].metadata.name, 25, sessions)).toBe(config.SMTP_PORT);
      // STARTTLS with the Secret's certificate, mounted as a folder (a subPath mount would never see a renewal).
      expect(readFileSync(config.smtpTls!.certFile, "utf8")).toBe(external["mx-tls"]["tls.crt"]);
      const mount = sessions.container.volumeMounts.find((m: any) => m.name === "smtp-tls");
      expect(mount).toEqual({ name: "smtp-tls", mountPath: "/etc/bas/smtp-tls", readOnly: true });
    } else {
      expect(config.MAIL_DOMAIN).toBe(host);
      expect(outside).toEqual([]);
      expect(config.smtpTls).toBeUndefined();
    }
    // Mail servers are anyone's: a pod of another namespace (as the load balancer's traffic) may connect.
    const sender: PodRef = { namespace: "elsewhere", labels: { app: "mail-relay" } };
    expect(mayConnect(ofKind(manifests(), "NetworkPolicy"), sender, sessions, config.SMTP_PORT)).toBe(true);
  });

  test("a model catalog in values is mounted where MODEL_CATALOG points, as a catalog the services load", () => {
    const users = ["gateway", "runner", "billing"].map((c) => pod(c)).filter((p) => p.env.MODEL_CATALOG);
    if (name === "production") expect(users).toHaveLength(3);
    for (const user of users) expect(loadModelCatalog(user.env.MODEL_CATALOG).ids.length).toBeGreaterThan(0);
  });
});
