import { createServer, type Server } from "node:http";
import puppeteer, { type Page } from "puppeteer-core";
import { eventually } from "./support/pool-harness";
import { type RestStack, startRestStack } from "./support/rest-stack";

/** Downloads as a caller sees them: files a page made the browser download, listed and downloadable through the API. */
let stack: RestStack;
let site: Server;
let siteHost: string;
let key: string;

const FILES: Record<string, { name: string; type: string; body: Buffer }> = {
  "/report": { name: "report.csv", type: "text/csv", body: Buffer.from("sku,qty\nA-1,3\nB-2,5\n") },
  "/notes": { name: "../../notes.txt", type: "text/plain", body: Buffer.from("take the stairs") },
  "/photo": { name: "photo.png", type: "image/png", body: Buffer.alloc(2_000, 7) },
  // Larger than MAX_DOWNLOAD_MB below: not kept.
  "/huge": { name: "huge.bin", type: "application/octet-stream", body: Buffer.alloc(64 * 1024, 1) },
};

beforeAll(async () => {
  site = createServer((req, res) => {
    const file = FILES[req.url ?? ""];
    if (file) {
      res.writeHead(200, {
        "content-type": file.type,
        "content-disposition": `attachment; filename="${file.name}"`,
      });
      res.end(file.body);
      return;
    }
    res.writeHead(200, { "content-type": "text/html" });
    res.end(
      Object.keys(FILES)
        .map((path) => `<a id="${path.slice(1)}" href="${path}">${path}</a>`)
        .join("<br>"),
    );
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteHost = `127.0.0.1:${(site.address() as { port: number }).port}`;
  // A warm browser too: its downloads are watched from its launch on, not from its hand-out.
  stack = await startRestStack({ BROWSER_EGRESS_ALLOW: siteHost, MAX_DOWNLOAD_MB: "0.05", WARM_POOL_SIZE: "1" });
  key = await stack.newProjectKey();
}, 60_000);

afterAll(async () => {
  await stack?.close();
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
});

async function openBrowser(): Promise<{ id: string; page: Page; close(): Promise<void> }> {
  const created = await stack.request("POST", "/api/v4/browsers", { key, body: {} });
  expect(created.status).toBe(201);
  const browser = await puppeteer.connect({ browserWSEndpoint: created.body.cdpUrl, defaultViewport: null });
  const [page] = await browser.pages();
  await page.goto(`http://${siteHost}/`);
  return { id: created.body.id, page, close: () => browser.disconnect() };
}

const downloadsOf = (id: string, query = "", version = "v4") =>
  stack.request("GET", `/api/${version}/browsers/${id}/downloads${query}`, { key });

test("a file the page downloads is listed under its own name and size, and downloadable with includeUrls", async () => {
  await stack.pool.service.warmPoolFilled(60_000);
  const waiting = await stack.pool.chromiumIds();
  const tenant = await openBrowser();
  // The warm browser was handed out.
  expect(waiting).toContain(tenant.id);
  await tenant.page.click("#report");
  const listed = await eventually(async () => {
    const r = await downloadsOf(tenant.id);
    return r.body.files.length === 1 ? r : undefined;
  });
  expect(listed.status).toBe(200);
  expect(listed.body).toEqual({
    files: [{ path: "report.csv", size: FILES["/report"].body.length, lastModified: expect.any(String), url: null }],
    nextCursor: null,
    hasMore: false,
  });
  expect(Date.parse(listed.body.files[0].lastModified)).toBeGreaterThan(Date.now() - 60_000);

  const withUrls = await downloadsOf(tenant.id, "?includeUrls=true");
  const file = await fetch(withUrls.body.files[0].url);
  expect(file.status).toBe(200);
  expect(file.headers.get("content-type")).toMatch(/^text\/csv/);
  expect(Buffer.from(await file.arrayBuffer()).equals(FILES["/report"].body)).toBe(true);
  // The same under /api/v3; another project's key does not find the browser.
  expect((await downloadsOf(tenant.id, "", "v3")).body.files).toHaveLength(1);
  const stranger = await stack.request("GET", `/api/v4/browsers/${tenant.id}/downloads`, {
    key: await stack.newProjectKey(),
  });
  expect(stranger.status).toBe(404);
  await tenant.close();
}, 60_000);

test("downloads page by cursor in the order they finished; a name with folders has none left; too large a file is not kept", async () => {
  const tenant = await openBrowser();
  // One at a time, so the order they finish in is the order clicked.
  let kept = 0;
  for (const link of ["#notes", "#huge", "#photo", "#report"]) {
    await tenant.page.click(link);
    if (link === "#huge") continue; // never listed
    kept += 1;
    await eventually(async () => ((await downloadsOf(tenant.id)).body.files.length === kept ? true : undefined));
  }
  const first = await downloadsOf(tenant.id, "?limit=2");
  const [notes, photo] = first.body.files.map((f: { path: string }) => f.path);
  expect(notes).toMatch(/notes\.txt$/);
  expect(notes).not.toMatch(/[/\\]/);
  expect(photo).toBe("photo.png");
  expect(first.body.hasMore).toBe(true);
  const second = await downloadsOf(tenant.id, `?limit=2&cursor=${first.body.nextCursor}`);
  expect(second.body).toMatchObject({ files: [{ path: "report.csv" }], hasMore: false, nextCursor: null });
  await tenant.close();

  // Once stopped, its files stay listed.
  await stack.request("PATCH", `/api/v4/browsers/${tenant.id}`, { key, body: { action: "stop" } });
  expect((await downloadsOf(tenant.id)).body.files).toHaveLength(3);
}, 60_000);

test("a wrong limit, cursor or includeUrls is a 422 naming the parameter", async () => {
  const tenant = await openBrowser();
  const limit = await downloadsOf(tenant.id, "?limit=0");
  expect(limit.status).toBe(422);
  expect(limit.body.detail[0]).toMatchObject({ loc: ["query", "limit"], type: "greater_than_equal" });
  const includeUrls = await downloadsOf(tenant.id, "?includeUrls=maybe");
  expect(includeUrls.status).toBe(422);
  expect(includeUrls.body.detail[0]).toMatchObject({ loc: ["query", "includeUrls"], type: "bool_parsing" });
  const cursor = await downloadsOf(tenant.id, "?cursor=abc");
  expect(cursor.status).toBe(422);
  expect(cursor.body.detail[0].loc).toEqual(["query", "cursor"]);
  await tenant.close();
}, 60_000);
