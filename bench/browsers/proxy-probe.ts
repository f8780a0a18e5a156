/**
 * A CDP proxy alone in a process, for measuring what an idle connection through it costs. Started with
 * --expose-gc by the benchmark; answers "measure" (after a full GC) over IPC.
 */
import { startCdpProxy } from "../../services/browser-pool/src/adapters/cdp/cdp-proxy";

const gc = (globalThis as { gc?: () => void }).gc;

async function main() {
  const proxy = await startCdpProxy({ host: "127.0.0.1", port: 0 });
  process.on("message", (msg: { type: string; spec?: any }) => {
    if (msg.type === "register") {
      proxy.register(msg.spec);
      process.send?.({ type: "registered", port: proxy.port });
    }
    if (msg.type === "measure") {
      for (let i = 0; i < 3; i++) gc?.();
      const m = process.memoryUsage();
      process.send?.({ type: "memory", rss: m.rss, heapUsed: m.heapUsed, external: m.external });
    }
    if (msg.type === "close") void proxy.close().then(() => process.exit(0));
  });
  process.send?.({ type: "ready", port: proxy.port });
}

void main();
