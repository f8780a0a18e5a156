import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Pod } from "kubernetes-models/v1/Pod";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { parse } from "yaml";
import type { Manifest } from "./chart";

/**
 * Validation of rendered manifests against the Kubernetes API schemas. kubernetes-models checks types, formats and
 * required fields but lets unknown fields through, so each object also makes a round trip through the typed models
 * of @kubernetes/client-node, which drop any field the API does not have: a misspelt `readinesProbe` is then missing
 * on the way back.
 */

type Model = { validate(): void };
const MODELS: Record<string, new (data: any) => Model> = {
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "rbac.authorization.k8s.io/v1/Role": Role,
  "rbac.authorization.k8s.io/v1/RoleBinding": RoleBinding,
  "v1/ConfigMap": ConfigMap,
  "v1/Pod": Pod,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
};

/**
 * Custom resources without a model here: checked for the fields the chart relies on. ServiceMonitor
 * (monitoring.coreos.com/v1, the Prometheus operator's): a label selector and endpoints naming a port.
 */
const STRUCTURAL: Record<string, (m: Manifest) => string[]> = {
  "monitoring.coreos.com/v1/ServiceMonitor": (m) => [
    ...(m.spec?.selector?.matchLabels ? [] : ["spec.selector.matchLabels is missing"]),
    ...(Array.isArray(m.spec?.endpoints) && m.spec.endpoints.length > 0 ? [] : ["spec.endpoints is empty"]),
    ...(m.spec?.endpoints ?? []).flatMap((e: any, i: number) =>
      typeof e.port === "string" && e.port ? [] : [`spec.endpoints[${i}].port must name a Service port`],
    ),
  ],
};

const typeKey = (m: Manifest) => `${m.apiVersion}/${m.kind}`;

/** Problems of one manifest against its schema; throws for a kind the chart should not render. */
export function schemaProblems(m: Manifest): string[] {
  const Model = MODELS[typeKey(m)];
  if (Model) {
    try {
      new Model(m).validate();
      return [];
    } catch (err) {
      return [(err as Error).message];
    }
  }
  const check = STRUCTURAL[typeKey(m)];
  if (check) return check(m);
  throw new Error(`${typeKey(m)} ${m.metadata.name}: no schema to validate it against; add one here`);
}

/** Sorted keys, for comparing objects that only differ in key order. */
const canonical = (value: any): any =>
  Array.isArray(value)
    ? value.map(canonical)
    : value && typeof value === "object"
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, canonical(value[key])]),
        )
      : value;

/** The manifest after a round trip through client-node's model of its kind (unknown fields dropped). */
export async function throughApiModels(m: Manifest): Promise<unknown> {
  const k8s = await import("@kubernetes/client-node");
  return canonical(parse(k8s.dumpYaml(k8s.loadYaml(JSON.stringify(m)))));
}

export const canonicalJson = (m: Manifest) => canonical(JSON.parse(JSON.stringify(m)));

export const hasApiModel = (m: Manifest) => typeKey(m) in MODELS;
