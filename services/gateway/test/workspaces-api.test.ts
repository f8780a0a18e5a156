import { type BlobStore, createNatsBlobStore } from "@bas/blobs";
import { eventually } from "@bas/testing";
import { type Stack, startStack } from "./harness";

/** Workspaces over REST: presigned uploads pinned to size and type, listings, downloads, paths, the quota, tenants. */
let stack: Stack;
let blobs: BlobStore;
const QUOTA = 1_000;
/** While set, neither the sessions service nor the gateway can delete blobs, as when the blob store is out of reach. */
let blobStoreAway = false;
/** The blobs the gateway stored, in order. */
const storedByGateway: string[] = [];
/** How long an upload's blob waits for its commit before it is swept (short here). */
const UPLOAD_GRACE_MS = 3_000;
/** Workspaces a project may keep here (MAX_WORKSPACES_PER_PROJECT). */
const WORKSPACE_LIMIT = 16;
/** The blob store as a service sees it: deletes fail while `blobStoreAway`; `onPut` hears of every blob stored. */
const failingDeletes =
  (onPut?: (ref: string) => void) =>
  (real: BlobStore): BlobStore => ({
    ...real,
    delete: (ref) => (blobStoreAway ? Promise.reject(new Error("blob store unreachable")) : real.delete(ref)),
    async put(data, options) {
      const ref = await real.put(data, options);
      onPut?.(ref);
      return ref;
    },
  });

beforeAll(async () => {
  stack = await startStack({
    // Room for the workspaces the other tests make in their project; the limit's own test uses a project of its own.
    sessionsEnv: { WORKSPACE_MAX_BYTES: String(QUOTA), MAX_WORKSPACES_PER_PROJECT: String(WORKSPACE_LIMIT) },
    sessionsDeps: { blobSweepMs: 200, uploadGraceMs: UPLOAD_GRACE_MS, wrapBlobs: failingDeletes() },
    gatewayDeps: { wrapBlobs: failingDeletes((ref) => storedByGateway.push(ref)) },
  });
  blobs = await createNatsBlobStore({ js: stack.infra.js, namespace: stack.infra.namespace });
});
afterAll(async () => {
  await stack.close();
});

/** The blob behind a presigned download URL (`/blobs/<ref>?exp=&sig=`). */
const blobRefOf = (url: string) => new URL(url).pathname.split("/").pop()!;

async function newWorkspace(name?: string, key?: string): Promise<string> {
  const reply = await stack.request("POST", "/api/v3/workspaces", { body: name ? { name } : {}, key });
  expect(reply.status).toBe(201);
  return reply.body.id;
}

async function presign(id: string, files: object[], prefix = "") {
  const query = prefix ? `?prefix=${encodeURIComponent(prefix)}` : "";
  return stack.request("POST", `/api/v3/workspaces/${id}/files/upload${query}`, { body: { files } });
}

const put = (url: string, body: string, contentType: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "PUT", body, headers: { "Content-Type": contentType, ...headers } });

async function upload(id: string, name: string, content: string, contentType = "text/csv", prefix = "") {
  const presigned = await presign(id, [{ name, contentType, size: Buffer.byteLength(content) }], prefix);
  expect(presigned.status).toBe(200);
  const res = await put(presigned.body.files[0].uploadUrl, content, contentType);
  expect([res.status, await res.text()]).toEqual([200, "OK"]);
  return presigned.body.files[0];
}

const listing = async (id: string, query = "") =>
  (await stack.request("GET", `/api/v3/workspaces/${id}/files${query}`)).body;

describe("workspaces", () => {
  it("are created, read, renamed, listed and deleted; another project's is not found", async () => {
    const id = await newWorkspace("reports");
    const read = await stack.request("GET", `/api/v3/workspaces/${id}`);
    expect(read.body).toEqual({ id, name: "reports", createdAt: expect.any(String), updatedAt: expect.any(String) });
    const v4 = await stack.request("GET", `/api/v4/workspaces/${id}`);
    expect(v4.body).toMatchObject({ id, name: "reports", archived: false });

    const renamed = await stack.request("PATCH", `/api/v3/workspaces/${id}`, { body: { name: "q1" } });
    expect(renamed.body.name).toBe("q1");
    expect((await stack.request("PATCH", `/api/v3/workspaces/${id}`, { body: {} })).body.name).toBe("q1");
    expect((await stack.request("PATCH", `/api/v3/workspaces/${id}`, { body: { name: null } })).body.name).toBeNull();

    const list = await stack.request("GET", "/api/v3/workspaces?pageSize=100");
    expect(list.body.items.map((w: { id: string }) => w.id)).toContain(id);

    const other = await stack.newProjectKey();
    expect((await stack.request("GET", `/api/v3/workspaces/${id}`, { key: other })).body).toEqual({
      detail: "Workspace not found",
    });
    expect((await stack.request("DELETE", `/api/v3/workspaces/${id}`, { key: other })).status).toBe(404);

    expect((await stack.request("DELETE", `/api/v3/workspaces/${id}`)).status).toBe(204);
    expect((await stack.request("GET", `/api/v3/workspaces/${id}`)).status).toBe(404);
    const created = await stack.request("POST", "/api/v4/workspaces", { body: { name: "v4" } });
    expect([created.status, created.body.archived]).toEqual([200, false]);
  });

  it("under /api/v4 too, as the official v4 client calls them: renamed, sized, a file deleted, deleted", async () => {
    const created = await stack.request("POST", "/api/v4/workspaces", { body: { name: "v4-all" } });
    const id = created.body.id;
    const renamed = await stack.request("PATCH", `/api/v4/workspaces/${id}`, { body: { name: "renamed" } });
    expect(renamed.body).toEqual({ ...created.body, name: "renamed", updatedAt: expect.any(String) });
    expect((await stack.request("PATCH", `/api/v4/workspaces/${id}`, { body: { name: null } })).body.name).toBeNull();

    const presigned = await stack.request("POST", `/api/v4/workspaces/${id}/files/upload`, {
      body: { files: [{ name: "a.txt", contentType: "text/plain", size: 3 }] },
    });
    expect((await put(presigned.body.files[0].uploadUrl, "abc", "text/plain")).status).toBe(200);
    expect((await stack.request("GET", `/api/v4/workspaces/${id}/size`)).body).toEqual({
      usedBytes: 3,
      maxBytes: QUOTA,
    });

    // allowOverrides false (the official client's default is true): a name the workspace has is a 409, and no URL.
    const again = { files: [{ name: "a.txt", contentType: "text/plain", size: 2 }] };
    const refused = await stack.request("POST", `/api/v4/workspaces/${id}/files/upload`, {
      body: { ...again, allowOverrides: false },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe(
      "The workspace already has uploads/a.txt; upload with allowOverrides true to replace, or delete first",
    );
    const allowed = await stack.request("POST", `/api/v4/workspaces/${id}/files/upload`, { body: again });
    expect(allowed.body.files[0]).toMatchObject({ path: "uploads/a.txt", willOverride: true });
    const fresh = await stack.request("POST", `/api/v4/workspaces/${id}/files/upload`, {
      body: { files: [{ name: "b.txt", contentType: "text/plain", size: 2 }], allowOverrides: false },
    });
    expect(fresh.body.files[0]).toMatchObject({ path: "uploads/b.txt", willOverride: false });

    const deleted = await stack.request("DELETE", `/api/v4/workspaces/${id}/files?path=uploads/a.txt`);
    expect(deleted.status).toBe(204);
    expect((await stack.request("GET", `/api/v4/workspaces/${id}/files`)).body.files).toEqual([]);
    const other = await stack.newProjectKey();
    expect((await stack.request("DELETE", `/api/v4/workspaces/${id}`, { key: other })).status).toBe(404);
    expect((await stack.request("DELETE", `/api/v4/workspaces/${id}`)).status).toBe(204);
    expect((await stack.request("GET", `/api/v4/workspaces/${id}/size`)).body).toEqual({
      detail: "Workspace not found",
    });
  });

  it("are kept up to the project's limit, even when asked for many at once: then 402; its default one is made even so", async () => {
    const mine = await stack.newProjectKey();
    const create = () => stack.request("POST", "/api/v4/workspaces", { key: mine, body: {} });
    const replies = await Promise.all(Array.from({ length: WORKSPACE_LIMIT + 4 }, create));
    const made = replies.filter((r) => r.status < 300);
    expect(made).toHaveLength(WORKSPACE_LIMIT);
    const refused = replies.filter((r) => r.status === 402);
    expect(refused.map((r) => r.body.detail)).toEqual(
      Array(4).fill(
        `This project has reached its limit of ${WORKSPACE_LIMIT} workspaces. Delete one to create another.`,
      ),
    );
    // A v4 run without a workspace gets the project's default one, which is made even at the limit.
    const run = await stack.request("POST", "/api/v4/runs", { key: mine, body: { task: "use the default workspace" } });
    expect(run.status).toBeLessThan(300);
    expect((await stack.request("GET", `/api/v4/workspaces/${run.body.workspaceId}`, { key: mine })).status).toBe(200);
    await stack.request("POST", `/api/v4/runs/${run.body.id}/cancel`, { key: mine });

    // Deleting two makes room for one: the default workspace counts too.
    for (const r of made.slice(0, 2)) {
      expect((await stack.request("DELETE", `/api/v3/workspaces/${r.body.id}`, { key: mine })).status).toBe(204);
    }
    expect((await create()).status).toBeLessThan(300);
    expect((await create()).status).toBe(402);
  });

  it("take a CSV through a presigned PUT; it is listed, downloadable and counted", async () => {
    const id = await newWorkspace();
    const csv = "sku,qty\nA-1,3\nB-2,5\n";
    const file = await upload(id, "orders.csv", csv, "text/csv", "in/");
    expect(file).toMatchObject({ name: "orders.csv", path: "in/orders.csv" });

    const page = await listing(id, "?includeUrls=true");
    expect(page).toEqual({
      files: [{ path: "in/orders.csv", size: csv.length, lastModified: expect.any(String), url: expect.any(String) }],
      folders: [],
      nextCursor: null,
      hasMore: false,
    });
    const download = await fetch(page.files[0].url);
    expect([download.status, download.headers.get("content-type"), await download.text()]).toEqual([
      200,
      expect.stringMatching(/^text\/csv/),
      csv,
    ]);
    expect((await listing(id)).files[0].url).toBeNull();
    // Asked for as an attachment, the URL makes a browser save the file under its name; the name cannot be changed.
    const saved = await fetch((await listing(id, "?includeUrls=true&contentDisposition=attachment")).files[0].url);
    expect([saved.status, saved.headers.get("content-disposition"), await saved.text()]).toEqual([
      200,
      'attachment; filename="orders.csv"',
      csv,
    ]);
    const renamed = new URL(saved.url);
    renamed.searchParams.set("dl", "orders.html");
    expect((await fetch(renamed)).status).toBe(403);
    const bad = await stack.request("GET", `/api/v4/workspaces/${id}/files?contentDisposition=inline`);
    expect([bad.status, bad.body.detail[0].loc]).toEqual([422, ["query", "contentDisposition"]]);
    const size = await stack.request("GET", `/api/v3/workspaces/${id}/size`);
    expect(size.body).toEqual({ usedBytes: csv.length, maxBytes: QUOTA });

    // A second upload to the same path replaces the file, and the usage with it.
    const v4 = await stack.request("POST", `/api/v4/workspaces/${id}/files/upload`, {
      body: { files: [{ name: "orders.csv", contentType: "text/csv", size: 4 }] },
    });
    expect(v4.body.files[0]).toMatchObject({
      storedName: "orders.csv",
      path: "uploads/orders.csv",
      willOverride: false,
    });
    const again = await presign(id, [{ name: "orders.csv", contentType: "text/csv", size: 4 }], "in");
    expect((await put(again.body.files[0].uploadUrl, "x,y\n", "text/csv")).status).toBe(200);
    expect((await listing(id)).files).toEqual([expect.objectContaining({ path: "in/orders.csv", size: 4 })]);
    expect((await stack.request("GET", `/api/v3/workspaces/${id}/size`)).body.usedBytes).toBe(4);

    expect((await stack.request("DELETE", `/api/v3/workspaces/${id}/files?path=in/orders.csv`)).status).toBe(204);
    expect((await listing(id)).files).toEqual([]);
    expect((await stack.request("GET", `/api/v3/workspaces/${id}/size`)).body.usedBytes).toBe(0);
    // Its bytes are gone too (deleted after the answer): the old download link then finds nothing.
    await eventually(
      () => blobs.getBytes(blobRefOf(page.files[0].url)),
      (found) => found === null,
    );
    expect((await fetch(page.files[0].url)).status).toBe(404);
  });

  it("holds an upload URL to the size and type it was made for, and to its signature", async () => {
    const id = await newWorkspace();
    const presigned = await presign(id, [{ name: "a.txt", contentType: "text/plain", size: 5 }]);
    const url: string = presigned.body.files[0].uploadUrl;
    const longer = await put(url, "123456", "text/plain");
    expect([longer.status, await longer.json()]).toEqual([
      400,
      { detail: "Content-Length must be 5, the size this URL was made for" },
    ]);
    const otherType = await put(url, "12345", "image/png");
    expect([otherType.status, (await otherType.json()).detail]).toEqual([
      400,
      "Content-Type must be text/plain, the type this URL was made for",
    ]);
    const tampered = await put(url.replace("size=5", "size=6"), "123456", "text/plain");
    expect([tampered.status, (await tampered.json()).detail]).toEqual([403, "Invalid or missing signature"]);
    const elsewhere = await put(url.replace("path=a.txt", "path=b.txt"), "12345", "text/plain");
    expect(elsewhere.status).toBe(403);
    expect((await listing(id)).files).toEqual([]);
    expect((await put(url, "12345", "text/plain; charset=utf-8")).status).toBe(200);
    expect((await listing(id)).files.map((f: { path: string }) => f.path)).toEqual(["a.txt"]);
  });

  it("refuses paths that leave the workspace, with a 422 naming the file", async () => {
    const id = await newWorkspace();
    for (const [name, why] of [
      ["../escape.txt", 'path must not contain ".."'],
      ["/etc/passwd", "path must be relative to the workspace root, not absolute"],
      ["a\\..\\b.txt", 'path must use "/" between folders, not "\\"'],
      ["bad\u0007name.txt", "path must not contain control characters"],
    ]) {
      const reply = await presign(id, [{ name, contentType: "text/plain", size: 1 }]);
      expect([name, reply.status, reply.body]).toEqual([
        name,
        422,
        { detail: [{ loc: ["body", "files", 0, "name"], msg: why, type: "value_error" }] },
      ]);
    }
    const viaPrefix = await presign(id, [{ name: "x.txt", contentType: "text/plain", size: 1 }], "../../");
    expect(viaPrefix.status).toBe(422);
    const deleting = await stack.request("DELETE", `/api/v3/workspaces/${id}/files?path=../x`);
    expect(deleting.body.detail[0]).toMatchObject({ loc: ["query", "path"], msg: 'path must not contain ".."' });
    const noSize = await presign(id, [{ name: "x.txt" }]);
    expect(noSize.body.detail[0]).toMatchObject({
      loc: ["body", "files", 0, "size"],
      msg: "size is required for workspace uploads",
    });
    // Normalised, not refused: redundant separators and "." segments.
    const tidy = await presign(id, [{ name: "./a//b.txt", contentType: "text/plain", size: 1 }]);
    expect(tidy.body.files[0].path).toBe("a/b.txt");
  });

  it("refuses what passes the quota with a 413, before and at upload, and keeps what was there", async () => {
    const id = await newWorkspace();
    await upload(id, "big.bin", "x".repeat(900), "application/octet-stream");
    const tooMuch = await presign(id, [{ name: "more.bin", contentType: "application/octet-stream", size: 200 }]);
    expect(tooMuch.status).toBe(413);
    expect(tooMuch.body.detail).toMatch(/^Workspace storage quota exceeded/);

    // Two URLs handed out while there was room: the second upload no longer fits and is refused whole.
    const first = await presign(id, [{ name: "one.bin", contentType: "application/octet-stream", size: 60 }]);
    const second = await presign(id, [{ name: "two.bin", contentType: "application/octet-stream", size: 60 }]);
    expect((await put(first.body.files[0].uploadUrl, "1".repeat(60), "application/octet-stream")).status).toBe(200);
    const refused = await put(second.body.files[0].uploadUrl, "2".repeat(60), "application/octet-stream");
    expect(refused.status).toBe(413);
    expect((await refused.json()).detail).toMatch(/quota exceeded: two\.bin/);
    expect((await listing(id)).files.map((f: { path: string }) => f.path)).toEqual(["big.bin", "one.bin"]);
    expect((await stack.request("GET", `/api/v3/workspaces/${id}/size`)).body).toEqual({
      usedBytes: 960,
      maxBytes: QUOTA,
    });

    // Deleting the workspace deletes its files' bytes too.
    const urls: string[] = (await listing(id, "?includeUrls=true")).files.map((f: { url: string }) => f.url);
    expect((await stack.request("DELETE", `/api/v3/workspaces/${id}`)).status).toBe(204);
    await eventually(
      () => Promise.all(urls.map((url) => blobs.getBytes(blobRefOf(url)))),
      (found) => found.every((b) => b === null),
    );
    expect(await Promise.all(urls.map(async (url) => (await fetch(url)).status))).toEqual([404, 404]);
  });

  it("lists a page at a time by path, with a prefix", async () => {
    const id = await newWorkspace();
    for (const name of ["c.txt", "a.txt", "r/1.txt", "b.txt", "r/2.txt"]) await upload(id, name, "1", "text/plain");
    const first = await listing(id, "?limit=2");
    expect([first.files.map((f: { path: string }) => f.path), first.hasMore]).toEqual([["a.txt", "b.txt"], true]);
    const second = await listing(id, `?limit=2&cursor=${first.nextCursor}`);
    expect(second.files.map((f: { path: string }) => f.path)).toEqual(["c.txt", "r/1.txt"]);
    const last = await listing(id, `?limit=2&cursor=${second.nextCursor}`);
    expect([last.files.map((f: { path: string }) => f.path), last.hasMore, last.nextCursor]).toEqual([
      ["r/2.txt"],
      false,
      null,
    ]);
    const folder = await listing(id, "?prefix=r/");
    expect(folder.files.map((f: { path: string }) => f.path)).toEqual(["r/1.txt", "r/2.txt"]);
    expect((await stack.request("GET", `/api/v3/workspaces/${id}/files?cursor=nonsense`)).status).toBe(422);
  });

  it("deletes the bytes of a deleted, replaced or orphaned file later when the blob store was away at the time", async () => {
    const id = await newWorkspace();
    const other = await newWorkspace();
    for (const name of ["gone.txt", "kept.txt"]) await upload(id, name, "old", "text/plain");
    await upload(other, "w.txt", "1", "text/plain");
    const refsIn = async (workspace: string) =>
      (await listing(workspace, "?includeUrls=true")).files.map((f: { url: string }) => blobRefOf(f.url));
    const released = [...(await refsIn(id)), ...(await refsIn(other))];
    const present = () => Promise.all(released.map(async (ref) => (await blobs.getBytes(ref)) !== null));
    blobStoreAway = true;
    try {
      expect((await stack.request("DELETE", `/api/v3/workspaces/${id}/files?path=gone.txt`)).status).toBe(204);
      await upload(id, "kept.txt", "new", "text/plain");
      expect((await stack.request("DELETE", `/api/v3/workspaces/${other}`)).status).toBe(204);
      // The caller sees every change at once; the bytes could not go yet.
      expect((await listing(id)).files.map((f: { path: string }) => f.path)).toEqual(["kept.txt"]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await present()).toEqual([true, true, true]);
    } finally {
      blobStoreAway = false;
    }
    // Once it is back, the sweep deletes them; the file that stayed keeps its new bytes.
    await eventually(present, (found) => found.every((p) => !p), 10_000);
    const [kept] = await refsIn(id);
    expect(Buffer.from((await blobs.getBytes(kept))!.data).toString()).toBe("new");
  });

  it("sweeps the bytes of an upload nobody recorded once its grace is over (its commit refused, its delete failed)", async () => {
    const id = await newWorkspace();
    await upload(id, "big.bin", "x".repeat(950), "application/octet-stream");
    const kept = storedByGateway.at(-1)!;
    const late = await presign(id, [{ name: "late.bin", contentType: "application/octet-stream", size: 20 }]);
    await upload(id, "fits.bin", "y".repeat(40), "application/octet-stream");
    blobStoreAway = true;
    let orphan: string;
    try {
      // Presigned while there was room; over the quota by the time it lands, so the commit is refused.
      const refused = await put(late.body.files[0].uploadUrl, "z".repeat(20), "application/octet-stream");
      expect(refused.status).toBe(413);
      orphan = storedByGateway.at(-1)!;
      expect(Buffer.from((await blobs.getBytes(orphan))!.data).toString()).toBe("z".repeat(20));
    } finally {
      blobStoreAway = false;
    }
    await eventually(
      () => blobs.getBytes(orphan),
      (found) => found === null,
      UPLOAD_GRACE_MS + 10_000,
    );
    // The files' own bytes stay past their grace: their commits recorded them.
    expect(Buffer.from((await blobs.getBytes(kept))!.data).toString()).toBe("x".repeat(950));
    expect((await listing(id)).files.map((f: { path: string }) => f.path)).toEqual(["big.bin", "fits.bin"]);
  });

  it("lists one level with shallow: the files right under the prefix, and its folders in their place, paged together", async () => {
    const id = await newWorkspace();
    const paths = ["b.txt", "in/x.csv", "in/deep/z.csv", "a.txt", "out/r.txt", "in/y.csv", "in.txt"];
    for (const path of paths) await upload(id, path, "1", "text/plain");
    const level = async (query: string) => {
      const page = await listing(id, query);
      return { files: page.files.map((f: { path: string }) => f.path), folders: page.folders, more: page.hasMore };
    };
    // "in.txt" sorts before "in/" ("." before "/"), as the paths themselves do.
    expect(await level("?shallow=true")).toEqual({
      files: ["a.txt", "b.txt", "in.txt"],
      folders: ["in/", "out/"],
      more: false,
    });
    expect(await level("?shallow=true&prefix=in/")).toEqual({
      files: ["in/x.csv", "in/y.csv"],
      folders: ["in/deep/"],
      more: false,
    });
    // A page holds files and folders alike, and the next one starts after the last of either.
    const pages: string[][] = [];
    let cursor = "";
    for (let more = true; more; ) {
      const page = await listing(id, `?shallow=true&limit=2${cursor}`);
      pages.push([...page.files.map((f: { path: string }) => f.path), ...page.folders]);
      more = page.hasMore;
      cursor = `&cursor=${page.nextCursor}`;
    }
    expect(pages).toEqual([["a.txt", "b.txt"], ["in.txt", "in/"], ["out/"]]);
    // Without shallow, every file and no folder; v4's listing has no folders at all.
    expect(await level("")).toEqual({ files: [...paths].sort(), folders: [], more: false });
    const v4 = await stack.request("GET", `/api/v4/workspaces/${id}/files`);
    expect(Object.keys(v4.body).sort()).toEqual(["files", "hasMore", "nextCursor"]);
  });

  it("must exist, in the caller's project, to be attached to a session or a run", async () => {
    const missing = "7b0c6a1e-3f7d-4e8a-9c51-2d4f6b8a0e13";
    const session = await stack.request("POST", "/api/v3/sessions", { body: { workspaceId: missing } });
    expect([session.status, session.body]).toEqual([404, { detail: "Workspace not found" }]);
    const run = await stack.request("POST", "/api/v4/runs", { body: { task: "t", workspaceId: missing } });
    expect([run.status, run.body]).toEqual([404, { detail: "Workspace not found" }]);
  });
});
