import type { Manifest } from "./chart";

/**
 * How ingress-nginx routes a request among the Ingresses of one host, as far as the chart relies on it: once any
 * Ingress of the host uses regular expressions (use-regex or rewrite-target), every path of the host is a
 * case-insensitive regular expression anchored at the start; the longest path that matches wins; its Ingress's
 * rewrite-target replaces the matched part of the path (the query string is kept apart and passed on).
 */

export interface Route {
  ingress: Manifest;
  service: string;
  port: string | number;
  /** The path the backend receives. */
  upstreamPath: string;
}

const usesRegex = (ingress: Manifest) => {
  const annotations = ingress.metadata.annotations ?? {};
  return (
    annotations["nginx.ingress.kubernetes.io/use-regex"] === "true" ||
    !!annotations["nginx.ingress.kubernetes.io/rewrite-target"]
  );
};

export function routeRequest(ingresses: Manifest[], url: string): Route | undefined {
  const { host, pathname } = new URL(url);
  const candidates = ingresses.flatMap((ingress) =>
    (ingress.spec.rules ?? [])
      .filter((rule: any) => rule.host === host)
      .flatMap((rule: any) => rule.http.paths.map((path: any) => ({ ingress, path }))),
  );
  const regexHost = candidates.some((c) => usesRegex(c.ingress));
  const ordered = [...candidates].sort((a, b) => b.path.path.length - a.path.path.length);
  for (const { ingress, path } of ordered) {
    const pattern = new RegExp(`^${path.path}`, "i");
    const hit = regexHost
      ? pattern.test(pathname)
      : path.pathType === "Exact"
        ? pathname === path.path
        : pathname === path.path || pathname.startsWith(path.path.replace(/\/?$/, "/"));
    if (!hit) continue;
    const target = ingress.metadata.annotations?.["nginx.ingress.kubernetes.io/rewrite-target"];
    const backend = path.backend.service;
    return {
      ingress,
      service: backend.name,
      port: backend.port.name ?? backend.port.number,
      upstreamPath: target ? pathname.replace(pattern, target) : pathname,
    };
  }
  return undefined;
}
