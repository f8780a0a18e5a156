import { createServer } from "node:http";

export const TEST_PAGE_TITLE = "BAS browser-pool test page";

/**
 * A local web page for browsers to open (the tests never reach the internet). Browsers reach it only when a test
 * opens its `host` (127.0.0.1:PORT) with BROWSER_EGRESS_ALLOW: loopback is closed to them otherwise.
 */
export async function startTestSite(): Promise<{
  url: string;
  host: string;
  /** Every request that arrived, as `host-header + path` (e.g. `other.site.test:4000/second`). */
  requests: string[];
  close(): Promise<void>;
}> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.headers.host ?? ""}${req.url ?? ""}`);
    const redirect = /^\/redirect\?to=([^&]+)$/.exec(req.url ?? "");
    if (redirect) {
      res.writeHead(302, { location: `http://${decodeURIComponent(redirect[1])}/` });
      res.end();
      return;
    }
    const title = req.url === "/second" ? "Second page" : TEST_PAGE_TITLE;
    const body = `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${"<p>filler</p>".repeat(200)}</body></html>`;
    // Readable by pages of other origins, so a cross-origin fetch the egress proxy lets through succeeds.
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "access-control-allow-origin": "*" });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
