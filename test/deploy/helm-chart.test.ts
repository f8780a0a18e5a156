import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findNatsServer } from "@bas/embedded-infra";
import { parse } from "yaml";
import {
  CHART,
  componentOf,
  containerPort,
  isHook,
  labelsMatch,
  lintChart,
  type Manifest,
  named,
  ofKind,
  podTemplates,
  ROOT,
  renderChart,
} from "./support/chart";
import { canonicalJson, hasApiModel, schemaProblems, throughApiModels } from "./support/kubernetes-schemas";
import { RENDERS } from "./renders";

/**
 * The Helm chart (deploy/helm/bas) as `helm template` renders it: valid Kubernetes objects, and every pod set up as
 * the chart promises (probes, limits, a locked-down security context, least-privilege RBAC). Wiring between the
 * objects (ingress routes, network paths, each service's configuration) is in helm-chart-wiring.test.ts.
 */

const rendered: Record<string, Manifest[]> = {};
let scratch: string;

beforeAll(() => {
  for (const [name, options] of Object.entries(RENDERS)) rendered[name] = renderChart(options);
  scratch = mkdtempSync(join(tmpdir(), "bas-chart-"));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test.each(Object.keys(RENDERS))("helm lint --strict passes with the %s values", (name) => {
  expect(lintChart(RENDERS[name])).toContain("0 chart(s) failed");
});

test("the chart's appVersion, the images' default tag, is package.json's version", () => {
  const chart = parse(readFileSync(join(CHART, "Chart.yaml"), "utf8"));
  expect(chart.appVersion).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
});

test("the install refuses to render without the public host or a database, saying which value to set", () => {
  const { set, ...minimal } = RENDERS.minimal;
  expect(() => renderChart({ ...minimal, set: { "postgres.url": set!["postgres.url"] } })).toThrow(
    /ingress.host is required/,
  );
  expect(() => renderChart({ ...minimal, set: { "ingress.host": set!["ingress.host"] } })).toThrow(
    /postgres.url is required/,
  );
  expect(() => renderChart({ ...RENDERS.minimal, set: { ...set, "secrets.bootstrapApiKey": "short" } })).toThrow(
    /bootstrapApiKey must start with bas_/,
  );
});

describe.each(Object.keys(RENDERS))("with the %s values", (name) => {
  const manifests = () => rendered[name];
  const namespace = RENDERS[name].namespace;
  const pods = () => podTemplates(manifests());
  const workloads = () => pods().filter((p) => !isHook(p.owner));

  test("every object validates against the Kubernetes schemas and has no field the API does not know", async () => {
    for (const m of manifests()) {
      expect({ object: `${m.kind} ${m.metadata.name}`, problems: schemaProblems(m) }).toEqual({
        object: `${m.kind} ${m.metadata.name}`,
        problems: [],
      });
      if (hasApiModel(m)) expect(await throughApiModels(m)).toEqual(canonicalJson(m));
    }
  });

  test("every object is in the release's namespace", () => {
    for (const m of manifests())
      expect([m.kind, m.metadata.name, m.metadata.namespace]).toEqual([m.kind, m.metadata.name, namespace]);
  });

  test("every long-running container has liveness and readiness probes on one of its own ports", () => {
    for (const { owner, spec } of workloads()) {
      for (const container of spec.containers) {
        for (const kind of ["livenessProbe", "readinessProbe", "startupProbe"]) {
          const probe = container[kind];
          if (kind !== "startupProbe")
            expect({ container: container.name, [kind]: !!probe }).toEqual({ container: container.name, [kind]: true });
          if (!probe || probe.exec) continue;
          const port = (probe.grpc ?? probe.httpGet ?? probe.tcpSocket).port;
          expect({ owner: owner.metadata.name, kind, port: containerPort(container, port) }).toEqual({
            owner: owner.metadata.name,
            kind,
            port: expect.any(Number),
          });
        }
      }
    }
  });

  test("every container has resource requests and limits", () => {
    for (const { spec } of pods()) {
      for (const container of spec.containers) {
        expect({ container: container.name, resources: container.resources }).toEqual({
          container: container.name,
          resources: {
            requests: { cpu: expect.anything(), memory: expect.anything() },
            limits: { cpu: expect.anything(), memory: expect.anything() },
          },
        });
      }
    }
  });

  test("every container runs as uid 1000, non-root, read-only, without capabilities, under RuntimeDefault seccomp", () => {
    for (const { owner, spec } of pods()) {
      for (const container of spec.containers) {
        const effective = { ...spec.securityContext, ...container.securityContext };
        expect({ pod: owner.metadata.name, container: container.name, ...effective }).toMatchObject({
          pod: owner.metadata.name,
          container: container.name,
          runAsNonRoot: true,
          runAsUser: 1000,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
          seccompProfile: { type: "RuntimeDefault" },
        });
        // A read-only root needs a writable /tmp (the hook's one-line node script writes nothing).
        if (!isHook(owner)) {
          const tmp = container.volumeMounts?.find((v: any) => v.mountPath === "/tmp");
          expect(spec.volumes.find((v: any) => v.name === tmp?.name)?.emptyDir).toBeDefined();
        }
      }
    }
  });

  test("only browser-pool holds a Kubernetes API token, through a namespaced Role with exactly the driver's verbs", () => {
    const all = manifests();
    expect(all.filter((m) => m.kind.startsWith("Cluster"))).toEqual([]);
    const [role] = ofKind(all, "Role");
    expect(ofKind(all, "Role")).toHaveLength(1);
    expect(role.metadata.namespace).toBe(namespace);
    // kube-api.ts: create/read/list/watch/delete pods; replace-or-create the browsers' NetworkPolicy.
    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["create", "get", "list", "watch", "delete"] },
      { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["create", "update"] },
    ]);
    const [binding] = ofKind(all, "RoleBinding");
    expect(ofKind(all, "RoleBinding")).toHaveLength(1);
    expect(binding.metadata.namespace).toBe(namespace);
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name });
    const pool = workloads().find((p) => componentOf(p.labels) === "browser-pool")!;
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: pool.spec.serviceAccountName, namespace }]);
    // The driver acts in the pod's own namespace, where the Role is.
    const env = pool.spec.containers[0].env.find((e: any) => e.name === "K8S_NAMESPACE");
    expect(env.valueFrom.fieldRef.fieldPath).toBe("metadata.namespace");
    for (const { owner, spec } of pods()) {
      const token = spec.automountServiceAccountToken;
      expect([owner.metadata.name, token]).toEqual([owner.metadata.name, owner === pool.owner]);
    }
  });

  test("every image is a target of the repository's Dockerfile, at the chart's version, or a pinned NATS/Postgres", () => {
    const dockerfile = join(ROOT, "Dockerfile");
    // The targets the images are built from; until the Dockerfile exists, the ones it is to have.
    const targets = existsSync(dockerfile)
      ? [...readFileSync(dockerfile, "utf8").matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1].toLowerCase())
      : ["gateway", "sessions", "runner", "billing", "browser-pool", "chromium"];
    const chart = parse(readFileSync(join(CHART, "Chart.yaml"), "utf8"));
    const images = pods().flatMap(({ spec }) => spec.containers.map((c: any) => c.image));
    const browserImage = pods()
      .flatMap(({ spec }) => spec.containers.flatMap((c: any) => c.env ?? []))
      .find((e: any) => e.name === "K8S_BROWSER_IMAGE").value;
    for (const image of [...images, browserImage]) {
      const ours = /(?:^|\/)bas\/([^/:]+):(.+)$/.exec(image);
      if (ours) {
        expect({ image, target: targets.includes(ours[1]), tag: ours[2] }).toEqual({
          image,
          target: true,
          tag: chart.appVersion,
        });
      } else {
        expect(image).toMatch(/^(nats:\d+\.\d+\.\d+-alpine|postgres:\d+\.\d+)$/);
      }
    }
    expect(images.some((i) => i.includes("bas/browser-pool:"))).toBe(true);
    expect(browserImage).toMatch(/bas\/chromium:/);
  });

  test("HorizontalPodAutoscalers drive the gateway and runner Deployments, which then leave replicas to them", () => {
    const hpas = ofKind(manifests(), "HorizontalPodAutoscaler");
    expect(hpas.map((h) => componentOf(h.metadata.labels)).sort()).toEqual(["gateway", "runner"]);
    for (const hpa of hpas) {
      const target = named(manifests(), hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name);
      expect(target.spec.replicas).toBeUndefined();
      expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
    }
  });

  test("each PodDisruptionBudget covers one workload with more than one pod", () => {
    const hpaMin = Object.fromEntries(
      ofKind(manifests(), "HorizontalPodAutoscaler").map((h) => [h.spec.scaleTargetRef.name, h.spec.minReplicas]),
    );
    for (const pdb of ofKind(manifests(), "PodDisruptionBudget")) {
      const covered = workloads().filter((p) => labelsMatch(pdb.spec.selector.matchLabels, p.labels));
      expect(covered).toHaveLength(1);
      const owner = covered[0].owner;
      expect(owner.spec.replicas ?? hpaMin[owner.metadata.name]).toBeGreaterThan(1);
      expect(pdb.spec.maxUnavailable).toBe(1);
    }
  });

  test("one dashboard ConfigMap per dashboards/*.json, labelled for Grafana's sidecar, holding the file", () => {
    const files = readdirSync(join(CHART, "dashboards")).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const configMap = manifests().find((m) => m.kind === "ConfigMap" && m.data?.[file] !== undefined);
      expect(configMap?.metadata.labels?.grafana_dashboard).toBe("1");
      expect(JSON.parse(configMap!.data[file])).toEqual(
        JSON.parse(readFileSync(join(CHART, "dashboards", file), "utf8")),
      );
    }
  });

  test("the NATS configuration is one nats-server accepts, with a route to every server of the cluster", () => {
    const config = manifests().find((m) => m.kind === "ConfigMap" && m.data?.["nats.conf"]);
    if (name === "production" || name === "minimal") expect(config).toBeDefined();
    if (!config) return;
    const statefulSet = named(manifests(), "StatefulSet", config.metadata.name);
    const replicas = statefulSet.spec.replicas;
    const routes = config.data["nats.conf"].match(/nats:\/\/\S+:6222/g) ?? [];
    expect(routes).toHaveLength(replicas > 1 ? replicas : 0);
    const file = join(scratch, `${name}-nats.conf`);
    writeFileSync(file, config.data["nats.conf"]);
    const check = spawnSync(findNatsServer(), ["-t", "-c", file], {
      encoding: "utf8",
      env: { ...process.env, SERVER_NAME: `${config.metadata.name}-0` },
    });
    expect([check.status, check.stderr]).toEqual([0, expect.stringContaining("is valid")]);
  });
});

test("keys left empty are generated in the right form, and the Secrets survive helm uninstall", () => {
  const secret = rendered.minimal.find((m) => m.kind === "Secret" && m.data?.SECRETS_KEY)!;
  const decoded = (key: string) => Buffer.from(secret.data[key], "base64").toString("utf8");
  expect(Buffer.from(decoded("SECRETS_KEY"), "base64")).toHaveLength(32);
  expect(Buffer.from(decoded("PROVIDER_KEY_SECRET"), "base64")).toHaveLength(32);
  expect(decoded("BLOB_SIGNING_KEY").length).toBeGreaterThanOrEqual(32);
  expect(decoded("BOOTSTRAP_API_KEY")).toMatch(/^bas_[A-Za-z0-9]{40}$/);
  for (const s of ofKind(rendered.minimal, "Secret")) {
    expect(s.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
  }
  // With existing Secrets the chart makes none.
  expect(ofKind(rendered.production, "Secret")).toEqual([]);
});
