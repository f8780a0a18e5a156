import { createServiceMetrics, type ServiceMetrics } from "@bas/service-kit";
import { Counter, Gauge, Histogram } from "prom-client";
import type { PoolMetrics } from "../../app/ports";
import type { CdpTraffic } from "../cdp/cdp-proxy";

export interface BrowserPoolPrometheusMetrics extends ServiceMetrics, PoolMetrics {
  /** Where the node's gauges and the CDP counters read their figures when Prometheus scrapes. */
  observeNode(node: NodeFigures): void;
}

export interface NodeFigures {
  nodeId: string;
  /** Browsers this node serves to callers now. */
  active(): number;
  /** Launched browsers waiting in the warm pool. */
  warmIdle(): number;
  /** How many the warm pool keeps (WARM_POOL_SIZE). */
  warmTarget: number;
  cdp: CdpTraffic;
}

/** A warm browser is handed out in milliseconds; a cold launch takes seconds, a pod on Kubernetes up to a minute. */
const ACQUIRE_SECONDS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** browser-pool's Prometheus metrics on top of what every service exports; `node` is the replica's NODE_ID. */
export function createBrowserPoolMetrics(): BrowserPoolPrometheusMetrics {
  const base = createServiceMetrics("browser-pool");
  const registers = [base.registry];
  let node: NodeFigures | undefined;
  new Gauge({
    name: "bas_browser_pool_browsers",
    help: "Browsers on this node by state: active (a caller's), warm (launched, idle, waiting for one).",
    labelNames: ["node", "state"] as const,
    registers,
    collect() {
      if (!node) return;
      this.set({ node: node.nodeId, state: "active" }, node.active());
      this.set({ node: node.nodeId, state: "warm" }, node.warmIdle());
    },
  });
  new Gauge({
    name: "bas_browser_pool_warm_target",
    help: "Idle browsers the node's warm pool keeps ready (WARM_POOL_SIZE).",
    labelNames: ["node"] as const,
    registers,
    collect() {
      if (node) this.set({ node: node.nodeId }, node.warmTarget);
    },
  });
  const acquire = new Histogram({
    name: "bas_browser_pool_acquire_duration_seconds",
    help: "Browsers handed out, by source (warm: from the warm pool, cold: launched for the caller), and how long each took.",
    labelNames: ["source"] as const,
    buckets: ACQUIRE_SECONDS,
    registers,
  });
  const warmResized = new Counter({
    name: "bas_browser_pool_warm_resized_total",
    help: "Warm browsers handed out at another window size than they waited at, so resized then (the warm pool refills at the sizes callers asked for last).",
    registers,
  });
  new Counter({
    name: "bas_browser_pool_cdp_bytes_total",
    help: "CDP bytes through the node's proxy, by direction (to_browser, to_client).",
    labelNames: ["node", "direction"] as const,
    registers,
    async collect() {
      if (!node) return;
      // The proxy keeps the totals (plain sums on its hot path): the counter reports them as they are.
      await node.cdp.refresh();
      this.reset();
      this.inc({ node: node.nodeId, direction: "to_browser" }, node.cdp.bytesToBrowsers);
      this.inc({ node: node.nodeId, direction: "to_client" }, node.cdp.bytesToClients);
    },
  });
  new Gauge({
    name: "bas_browser_pool_cdp_connections",
    help: "CDP client connections open through the node's proxy now.",
    labelNames: ["node"] as const,
    registers,
    collect() {
      if (node) this.set({ node: node.nodeId }, node.cdp.connections);
    },
  });

  return {
    ...base,
    observeNode(figures) {
      node = figures;
    },
    acquired(source, seconds) {
      acquire.observe({ source }, seconds);
    },
    warmResized() {
      warmResized.inc();
    },
  };
}
