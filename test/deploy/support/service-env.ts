import { loadBillingConfig } from "@bas/billing/src/config";
import { loadBrowserPoolConfig } from "@bas/browser-pool/src/config";
import { loadGatewayConfig } from "@bas/gateway/src/config";
import { loadRunnerConfig } from "@bas/runner/src/config";
import { loadSessionsConfig } from "@bas/sessions/src/config";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startTelemetry } from "@bas/service-kit";
import type { Manifest } from "./chart";

/** Each service's configuration loader (services/<name>/src/config.ts), as its main.ts calls it. */
export const LOADERS: Record<string, (env: NodeJS.ProcessEnv) => unknown> = {
  gateway: loadGatewayConfig,
  sessions: loadSessionsConfig,
  "browser-pool": loadBrowserPoolConfig,
  runner: loadRunnerConfig,
  billing: loadBillingConfig,
};

/**
 * The variables a service reads: every key its schema looks up, recorded by handing the loader an environment that
 * notes each read, plus those of the telemetry every service starts first (runService).
 */
export function variablesRead(service: string): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, key) {
      if (typeof key === "string") read.add(key);
      return undefined;
    },
  });
  for (const load of [LOADERS[service], (e: NodeJS.ProcessEnv) => startTelemetry(service, e)]) {
    try {
      load(env);
    } catch {
      // required keys missing: the reads happened all the same
    }
  }
  return read;
}

/** The variables a service cannot start without: those its loader names when given nothing. */
export function requiredVariables(service: string): string[] {
  try {
    LOADERS[service]({});
    return [];
  } catch (err) {
    // "invalid configuration:\n  VAR: why"
    return (err as Error).message
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(":")[0]);
  }
}

/** What the downward API gives a pod, for the fieldRef variables. */
export interface PodFacts {
  name: string;
  namespace: string;
  uid: string;
  podIP: string;
}

/**
 * A container's environment as Kubernetes would build it: literal values with $(VAR) references to earlier
 * variables expanded, Secret and ConfigMap keys from the rendered objects (or from `external`, standing in for
 * Secrets the chart only names), downward API fields from `pod`. An optional key that is absent is left unset.
 */
export function resolveEnv(
  container: any,
  manifests: Manifest[],
  pod: PodFacts,
  external: Record<string, Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  const fields: Record<string, string> = {
    "metadata.name": pod.name,
    "metadata.namespace": pod.namespace,
    "metadata.uid": pod.uid,
    "status.podIP": pod.podIP,
  };
  const lookUp = (kind: "Secret" | "ConfigMap", ref: { name: string; key: string; optional?: boolean }) => {
    const value = dataOf(kind, ref.name, manifests, external)[ref.key];
    if (value === undefined && !ref.optional) {
      throw new Error(`${container.name}: ${kind} ${ref.name} has no key ${ref.key}`);
    }
    return value;
  };
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    const value =
      variable.value !== undefined
        ? String(variable.value).replace(/\$\((\w+)\)/g, (whole, name) => env[name] ?? whole)
        : from?.fieldRef
          ? fields[from.fieldRef.fieldPath]
          : from?.secretKeyRef
            ? lookUp("Secret", from.secretKeyRef)
            : from?.configMapKeyRef
              ? lookUp("ConfigMap", from.configMapKeyRef)
              : undefined;
    if (value === undefined && !from?.secretKeyRef?.optional && !from?.configMapKeyRef?.optional) {
      throw new Error(`${container.name}: cannot resolve ${variable.name}`);
    }
    if (value !== undefined) env[variable.name] = value;
  }
  return env;
}

/** The keys of a rendered Secret (decoded) or ConfigMap, or of a stand-in for one the chart only names. */
function dataOf(
  kind: "Secret" | "ConfigMap",
  name: string,
  manifests: Manifest[],
  external: Record<string, Record<string, string>>,
): Record<string, string> {
  const object = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!object) return external[name] ?? {};
  const data: Record<string, string> = object.data ?? {};
  if (kind === "ConfigMap") return data;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
}

/**
 * Writes the files a container's Secret and ConfigMap volumes give it under `root`, as the kubelet mounts them
 * (a folder of keys, or one key at a subPath), and returns `env` with every path into such a mount moved under
 * `root`: the environment then names files the service can read here.
 */
export function withMountedFiles(
  env: Record<string, string>,
  container: any,
  volumes: any[],
  manifests: Manifest[],
  root: string,
  external: Record<string, Record<string, string>> = {},
): Record<string, string> {
  const mounted: string[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const volume = volumes.find((v) => v.name === mount.name);
    const source = volume?.secret
      ? dataOf("Secret", volume.secret.secretName, manifests, external)
      : volume?.configMap
        ? dataOf("ConfigMap", volume.configMap.name, manifests, external)
        : undefined;
    if (!source) continue;
    const at = join(root, mount.mountPath);
    if (mount.subPath) {
      mkdirSync(dirname(at), { recursive: true });
      writeFileSync(at, source[mount.subPath]);
    } else {
      mkdirSync(at, { recursive: true });
      for (const [key, value] of Object.entries(source)) writeFileSync(join(at, key), value);
    }
    mounted.push(mount.mountPath);
  }
  const inMount = (value: string) => mounted.some((m) => value === m || value.startsWith(`${m}/`));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, inMount(v) ? join(root, v) : v]));
}
