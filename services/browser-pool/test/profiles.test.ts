import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { status } from "@grpc/grpc-js";
import { type BlobStore, createNatsBlobStore } from "@bas/blobs";
import { natsUrl, startSeverableLink } from "@bas/testing";
import { list } from "tar";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { eventually, startPoolHarness } from "./support/pool-harness";
import { type RestStack, startRestStack } from "./support/rest-stack";

/**
 * Profiles as a caller uses them: sign in on a site in a browser started with a profile, stop it, and the next
 * browser with the profile is still signed in (a session cookie) and keeps the site's local storage and IndexedDB.
 */
let stack: RestStack;
let site: Server;
let siteUrl: string;
let key: string;
/** While set, browser-pool cannot delete blobs, as when the blob store is out of reach. */
let blobStoreAway = false;
/** While set, profile saves wait for it before their bytes are stored (a slow save); their refs are kept here. */
let holdSaves: Promise<void> | undefined;
const heldSaves: string[] = [];
let heldSince = 0;
/** How long a save may take to be recorded before it is swept as never recorded (short here). */
const SAVE_GRACE_MS = 10_000;
/** Profiles a project may keep here (MAX_PROFILES_PER_PROJECT). */
const PROFILE_LIMIT = 12;
/** The deployment's blob store, as browser-pool's: where profiles' saved states are. */
let blobs: BlobStore;

/** Whether the blob store holds `ref`. */
const stored = async (ref: string) => {
  const blob = await blobs.get(ref);
  blob?.stream.destroy();
  return blob !== null;
};

/** The site keeps a draft in IndexedDB (database "site", store "drafts"). */
const DRAFTS_SCRIPT = `<script>
  const drafts = (mode, use) => new Promise((resolve, reject) => {
    const open = indexedDB.open("site", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("drafts");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction("drafts", mode);
      const request = use(tx.objectStore("drafts"));
      tx.oncomplete = () => { open.result.close(); resolve(request.result ?? null); };
      tx.onerror = () => reject(tx.error);
    };
  });
  window.saveDraft = (text) => drafts("readwrite", (store) => store.put(text, "current")).then(() => undefined);
  window.readDraft = () => drafts("readonly", (store) => store.get("current"));
</script>`;

beforeAll(async () => {
  // Signed in = a session cookie (no expiry: Chromium never writes it to its cookie file).
  site = createServer((req, res) => {
    const user = /^\/login\?user=(\w+)$/.exec(req.url ?? "")?.[1];
    if (user) {
      res.writeHead(302, { "set-cookie": `sid=${user}; Path=/; HttpOnly`, location: "/" });
      res.end();
      return;
    }
    const sid = /(?:^|;\s*)sid=(\w+)/.exec(req.headers.cookie ?? "")?.[1];
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<title>Account</title><h1 id="who">${sid ? `Signed in as ${sid}` : "Signed out"}</h1>${DRAFTS_SCRIPT}`);
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(site.address() as { port: number }).port}`;
  siteUrl = `http://${host}`;
  stack = await startRestStack(
    // Room for the profiles the other tests make in their project; the limit's own test uses a project of its own.
    { BROWSER_EGRESS_ALLOW: host, MAX_PROFILES_PER_PROJECT: String(PROFILE_LIMIT) },
    {
      profileStateSweepMs: 200,
      profileSaveGraceMs: SAVE_GRACE_MS,
      wrapBlobs: (real) => ({
        ...real,
        delete: (ref) => (blobStoreAway ? Promise.reject(new Error("blob store unreachable")) : real.delete(ref)),
        async put(data, options) {
          if (holdSaves && options.ref?.startsWith("profile-")) {
            heldSaves.push(options.ref);
            heldSince = Date.now();
            await holdSaves;
          }
          return real.put(data, options);
        },
      }),
    },
    // A create that takes a profile over waits 6 s for the hung save first, then launches cold: beside other test
    // files the launch can take more than the 4 s the default deadline (10 s) leaves it.
    { GRPC_DEADLINE_MS: "30000" },
  );
  key = await stack.newProjectKey();
  blobs = await createNatsBlobStore({ js: stack.pool.infra.js, namespace: stack.pool.infra.namespace });
}, 60_000);

afterAll(async () => {
  await blobs?.close();
  await stack?.close();
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
});

async function startBrowser(body: object): Promise<{ id: string; browser: Browser; page: Page }> {
  const created = await stack.request("POST", "/api/v4/browsers", { key, body });
  expect(created).toMatchObject({ status: 201 });
  const browser = await puppeteer.connect({ browserWSEndpoint: created.body.cdpUrl, defaultViewport: null });
  const [page] = await browser.pages();
  return { id: created.body.id, browser, page };
}

/** What the site's page script offers: its drafts, kept in the page's IndexedDB. */
type DraftsPage = { saveDraft(text: string): Promise<void>; readDraft(): Promise<string | null> };

const saveDraft = (page: Page, text: string) =>
  page.evaluate((t) => (window as unknown as DraftsPage).saveDraft(t), text);

async function whoIsSignedIn(page: Page): Promise<{ who: string; note: string | null; draft: string | null }> {
  await page.goto(`${siteUrl}/`);
  return page.evaluate(async () => ({
    who: document.getElementById("who")!.textContent!,
    note: localStorage.getItem("note"),
    draft: await (window as unknown as DraftsPage).readDraft(),
  }));
}

const stop = (id: string) => stack.request("PATCH", `/api/v4/browsers/${id}`, { key, body: { action: "stop" } });

test("a profile carries sign-in, local storage and IndexedDB to the next browser; one browser at a time; others see nothing", async () => {
  const created = await stack.request("POST", "/api/v4/profiles", { key, body: { name: "shopper", userId: "u-7" } });
  expect(created.status).toBe(201);
  const profile = created.body;
  expect(profile).toEqual({
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    userId: "u-7",
    name: "shopper",
    lastUsedAt: null,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
    cookieDomains: [],
  });

  const first = await startBrowser({ profileId: profile.id });
  await first.page.goto(`${siteUrl}/login?user=ana`);
  await first.page.evaluate(() => localStorage.setItem("note", "remember me"));
  await saveDraft(first.page, "half-written review");
  expect(await whoIsSignedIn(first.page)).toEqual({
    who: "Signed in as ana",
    note: "remember me",
    draft: "half-written review",
  });

  // While it is open, no second browser gets it, and it cannot be deleted.
  const second = await stack.request("POST", "/api/v4/browsers", { key, body: { profileId: profile.id } });
  expect(second.status).toBe(409);
  expect(second.body.detail).toMatch(/in use by browser .*one browser at a time/);
  expect((await stack.request("DELETE", `/api/v4/profiles/${profile.id}`, { key })).status).toBe(409);

  await first.browser.disconnect();
  await stop(first.id);
  const saved = await eventually(async () => {
    const r = await stack.request("GET", `/api/v4/profiles/${profile.id}`, { key });
    return r.body.cookieDomains.length > 0 ? r.body : undefined;
  }, 30_000);
  expect(saved.cookieDomains).toEqual(["127.0.0.1"]);
  expect(saved.lastUsedAt).not.toBeNull();

  const next = await startBrowser({ profileId: profile.id });
  expect(await whoIsSignedIn(next.page)).toEqual({
    who: "Signed in as ana",
    note: "remember me",
    draft: "half-written review",
  });
  const stranger = await startBrowser({});
  expect(await whoIsSignedIn(stranger.page)).toEqual({ who: "Signed out", note: null, draft: null });
  for (const b of [next, stranger]) {
    await b.browser.disconnect();
    await stop(b.id);
  }
}, 120_000);

test("a browser started with a profile right after the last one with it stopped starts from what that one saved", async () => {
  const profile = (await stack.request("POST", "/api/v4/profiles", { key, body: { name: "relay" } })).body;
  const first = await startBrowser({ profileId: profile.id });
  await first.page.goto(`${siteUrl}/login?user=bo`);
  await first.browser.disconnect();
  expect((await stop(first.id)).status).toBe(200);

  // No wait for the save: the create waits for it instead of starting from the state before.
  const next = await startBrowser({ profileId: profile.id });
  expect((await whoIsSignedIn(next.page)).who).toBe("Signed in as bo");
  await next.browser.disconnect();
  await stop(next.id);
}, 60_000);

/** Where the node keeps the states it saved, unpacked (one folder per state, named by its ref). */
const keptDir = () => join(stack.pool.dataDir, ".profile-states");
/** The ref of the profile's state the node keeps unpacked, if it keeps one. */
const keptStateOf = async (profileId: string) =>
  (await readdir(keptDir()).catch(() => [])).find((name) => name.includes(profileId));

/** Deletes the profile once the last browser's save has freed it (a 409 until then). */
async function deleteProfile(profileId: string) {
  const answered = await eventually(async () => {
    const deleted = await stack.request("DELETE", `/api/v4/profiles/${profileId}`, { key });
    return deleted.status === 409 ? undefined : deleted;
  }, 30_000);
  expect(answered.status).toBe(204);
}

/** Every file and folder under `dir`, relative to it. */
async function entriesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

test("the node that saved a profile keeps its state unpacked, as the archive holds it; the next browser there starts from it, one elsewhere from the archive; a delete removes it", async () => {
  const profile = (await stack.request("POST", "/api/v4/profiles", { key, body: { name: "kept" } })).body;
  const signedIn = { who: "Signed in as cy", note: "kept note", draft: "kept draft" };
  const first = await startBrowser({ profileId: profile.id });
  await first.page.goto(`${siteUrl}/login?user=cy`);
  await first.page.evaluate(() => localStorage.setItem("note", "kept note"));
  await saveDraft(first.page, "kept draft");
  await first.browser.disconnect();
  await stop(first.id);

  const keptOf = () => keptStateOf(profile.id);
  const ref = await eventually(keptOf, 30_000);
  // The kept folder holds exactly what the saved archive holds: no caches, no per-run files of the last browser.
  const archived: string[] = [];
  const blob = await blobs.get(ref);
  await pipeline(blob!.stream, list({ onReadEntry: (entry) => archived.push(entry.path) }));
  const held = archived.map((path) => path.replace(/^\.\/?/, "").replace(/\/$/, "")).filter(Boolean);
  expect(await entriesUnder(join(keptDir(), ref))).toEqual(held.sort());
  expect(held).toContain("Default/Preferences");
  expect(held.filter((path) => /Cache|Singleton|DevToolsActivePort/.test(path))).toEqual([]);

  // The next browser on this node takes the folder (it is kept no more) and has the whole state.
  const next = await startBrowser({ profileId: profile.id });
  expect(await keptOf()).toBeUndefined();
  expect(await whoIsSignedIn(next.page)).toEqual(signedIn);
  await next.browser.disconnect();
  await stop(next.id);

  // A node without the folder (another saved the state, or it was evicted) unpacks the archive: the same state.
  await rm(join(keptDir(), await eventually(keptOf, 30_000)), { recursive: true });
  const elsewhere = await startBrowser({ profileId: profile.id });
  expect(await whoIsSignedIn(elsewhere.page)).toEqual(signedIn);
  await elsewhere.browser.disconnect();
  await stop(elsewhere.id);

  // A deleted profile leaves nothing of its state on the node.
  await deleteProfile(profile.id);
  expect(await keptOf()).toBeUndefined();
}, 120_000);

test("a deleted profile's unpacked copies go from the other nodes too: at once if they run, once they hear again if cut off from NATS, when they start if down", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "bas-bp-other-"));
  const nats = new URL(natsUrl());
  const link = await startSeverableLink({ host: nats.hostname, port: Number(nats.port) });
  const startOther = () =>
    startPoolHarness(
      { NODE_ID: "other-node", NATS_URL: `nats://${link.address}` },
      {},
      { infra: stack.pool.infra, dataDir },
    );
  let other = await startOther();
  const newProfile = async () => {
    const created = await stack.request("POST", "/api/v4/profiles", { key, body: {} });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const [deletedWhileUp, deletedWhileCut, deletedWhileDown, live] = [
    await newProfile(),
    await newProfile(),
    await newProfile(),
    await newProfile(),
  ];
  // A node keeps the states it saved as folders named by their refs: each profile's last save happened there.
  const otherKept = join(dataDir, ".profile-states");
  for (const profileId of [deletedWhileUp, deletedWhileCut, deletedWhileDown, live]) {
    mkdirSync(join(otherKept, `profile-${profileId}-${randomUUID()}.tgz`, "Default"), { recursive: true });
  }
  const copiesOf = async (profileId: string) =>
    (await readdir(otherKept).catch(() => [])).filter((name) => name.includes(profileId));
  try {
    // The delete is handled by the gateway's node; the other hears of it.
    await deleteProfile(deletedWhileUp);
    await eventually(async () => ((await copiesOf(deletedWhileUp)).length === 0 ? true : undefined), 10_000);

    link.cut();
    await deleteProfile(deletedWhileCut);
    await sleep(1_000);
    expect(await copiesOf(deletedWhileCut)).toHaveLength(1);
    link.restore();
    await eventually(async () => ((await copiesOf(deletedWhileCut)).length === 0 ? true : undefined), 20_000);

    await other.close();
    await deleteProfile(deletedWhileDown);
    other = await startOther();
    expect(await copiesOf(deletedWhileDown)).toEqual([]);
    expect(await copiesOf(live)).toHaveLength(1);
  } finally {
    await other.close();
    await link.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 90_000);

test("a profile holds one saved state: each save deletes the blob of the one it replaces, and a delete the last", async () => {
  const profile = (await stack.request("POST", "/api/v4/profiles", { key, body: {} })).body;
  const refs: string[] = [];
  for (const user of ["di", "ed"]) {
    const b = await startBrowser({ profileId: profile.id });
    await b.page.goto(`${siteUrl}/login?user=${user}`);
    await b.browser.disconnect();
    await stop(b.id);
    refs.push(await eventually(() => keptStateOf(profile.id), 30_000));
  }
  await eventually(async () => ((await stored(refs[0])) ? undefined : true), 30_000);
  expect(await stored(refs[1])).toBe(true);
  const next = await startBrowser({ profileId: profile.id });
  expect((await whoIsSignedIn(next.page)).who).toBe("Signed in as ed");
  await next.browser.disconnect();
  await stop(next.id);
  refs.push(await eventually(() => keptStateOf(profile.id), 30_000));

  await deleteProfile(profile.id);
  const last = (await stack.request("GET", `/api/v4/profiles/${profile.id}`, { key })).status;
  expect(last).toBe(404);
  // Every state the profile ever saved is gone from the blob store (the one the last save replaced goes once that
  // save is recorded, which the delete does not wait for).
  await eventually(async () => ((await Promise.all(refs.map(stored))).some(Boolean) ? undefined : true), 30_000);
}, 120_000);

test("states whose delete fails while the blob store is away go once it is back: a replaced one, a deleted profile's last", async () => {
  const profile = (await stack.request("POST", "/api/v4/profiles", { key, body: {} })).body;
  const refs: string[] = [];
  const signInAndStop = async (user: string) => {
    const b = await startBrowser({ profileId: profile.id });
    await b.page.goto(`${siteUrl}/login?user=${user}`);
    await b.browser.disconnect();
    await stop(b.id);
    const saved = async () => {
      const ref = await keptStateOf(profile.id);
      return ref && !refs.includes(ref) ? ref : undefined;
    };
    refs.push(await eventually(saved, 30_000));
  };
  await signInAndStop("fa");
  blobStoreAway = true;
  try {
    await signInAndStop("gu");
    await deleteProfile(profile.id);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Let go, and still there: the first replaced by the second, the second by the delete.
    expect(await Promise.all(refs.map(stored))).toEqual([true, true]);
  } finally {
    blobStoreAway = false;
  }
  await eventually(async () => ((await Promise.all(refs.map(stored))).some(Boolean) ? undefined : true), 10_000);
}, 120_000);

test("a save that is never recorded (its profile was taken over) and whose delete failed goes too; a recorded one stays", async () => {
  const profile = (await stack.request("POST", "/api/v4/profiles", { key, body: {} })).body;
  const slow = await startBrowser({ profileId: profile.id });
  await slow.page.goto(`${siteUrl}/login?user=hu`);
  await slow.browser.disconnect();
  let release: () => void = () => undefined;
  holdSaves = new Promise<void>((resolve) => {
    release = resolve;
  });
  let unrecorded = "";
  let recordedAt = 0;
  try {
    await stop(slow.id);
    // The save hangs: the next browser takes the profile over after a while, from the state before (none).
    const next = await startBrowser({ profileId: profile.id });
    expect((await whoIsSignedIn(next.page)).who).toBe("Signed out");
    await next.page.goto(`${siteUrl}/login?user=ivo`);
    await next.browser.disconnect();
    // The slow save outlasts its grace: the sweep finds nothing stored yet, and must come back once it is.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, heldSince + SAVE_GRACE_MS + 1_000 - Date.now())));
    // The slow save is stored now, and its close, too late, records nothing; its delete fails.
    blobStoreAway = true;
    holdSaves = undefined;
    release();
    unrecorded = heldSaves.splice(0)[0];
    await eventually(async () => ((await stored(unrecorded)) ? true : undefined), 10_000);
    await stop(next.id);
    await eventually(async () => {
      const r = await stack.request("GET", `/api/v4/profiles/${profile.id}`, { key });
      return r.body.cookieDomains.length > 0 ? true : undefined;
    }, 30_000);
    recordedAt = Date.now();
  } finally {
    blobStoreAway = false;
    holdSaves = undefined;
    release();
  }
  // Once its grace is over, the sweep removes the save nobody recorded.
  await eventually(async () => ((await stored(unrecorded)) ? undefined : true), SAVE_GRACE_MS + 10_000);
  // The recorded one stays past its grace: the profile points at it.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, recordedAt + SAVE_GRACE_MS + 1_000 - Date.now())));
  const last = await startBrowser({ profileId: profile.id });
  expect((await whoIsSignedIn(last.page)).who).toBe("Signed in as ivo");
  await last.browser.disconnect();
  await stop(last.id);
}, 120_000);

test("a create waiting to take a profile over whose caller stops waiting keeps no browser and leaves the profile free", async () => {
  const { client } = stack.pool;
  const projectId = randomUUID();
  const profile = await client.createProfile({ projectId });
  const settings = { profileId: profile.id, record: false, allowedDomains: [] };
  const create = (deadlineMs?: number) =>
    client.createBrowser({ projectId, settings, timeoutMinutes: 0, metadata: {} }, { deadlineMs });
  const first = await create();
  let release: () => void = () => undefined;
  holdSaves = new Promise<void>((resolve) => {
    release = resolve;
  });
  try {
    await client.stopBrowser({ projectId, browserId: first.id });
    await eventually(async () => (heldSaves.length > 0 ? true : undefined), 10_000);
    // The create waits for the hung save (PROFILE_SAVE_WAIT_MS, 6 s) before it takes over; its caller gives up first.
    const asked = Date.now();
    await expect(create(1_000)).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
    await sleep(Math.max(0, asked + 7_000 - Date.now()));
    // Had it started a browser, that browser would hold the profile (409) and the project would list it.
    const next = await create();
    const { items } = await client.listBrowsers({ projectId, pageNumber: 1, pageSize: 10 });
    expect(items.map((b) => b.id)).toEqual([next.id, first.id]);
    holdSaves = undefined;
    release();
    await client.stopBrowser({ projectId, browserId: next.id });
  } finally {
    holdSaves = undefined;
    release();
    heldSaves.splice(0);
  }
}, 60_000);

test("a browser stopped by its timeout saves into its profile too", async () => {
  const profile = (await stack.request("POST", "/api/v4/profiles", { key, body: {} })).body;
  const first = await startBrowser({ profileId: profile.id, timeout: 1 });
  await first.page.goto(`${siteUrl}/login?user=bo`);
  await first.browser.disconnect();
  stack.pool.clock.advance(61_000);
  await eventually(async () => {
    const r = await stack.request("GET", `/api/v4/profiles/${profile.id}`, { key });
    return r.body.cookieDomains.length > 0 ? true : undefined;
  }, 30_000);
  const next = await startBrowser({ profileId: profile.id });
  expect((await whoIsSignedIn(next.page)).who).toBe("Signed in as bo");
  await next.browser.disconnect();
  await stop(next.id);
}, 120_000);

test("a project keeps at most its limit of profiles, even asking for many at once: then 402, and a delete makes room", async () => {
  const mine = await stack.newProjectKey();
  const create = () => stack.request("POST", "/api/v4/profiles", { key: mine, body: {} });
  const replies = await Promise.all(Array.from({ length: PROFILE_LIMIT + 4 }, create));
  const created = replies.filter((r) => r.status === 201 || r.status === 200);
  expect(created).toHaveLength(PROFILE_LIMIT);
  const refused = replies.filter((r) => r.status === 402);
  expect(refused).toHaveLength(4);
  expect(refused[0].body.detail).toBe(
    `Subscription required for additional profiles: this project has reached its limit of ${PROFILE_LIMIT} profiles. Delete one to create another.`,
  );
  expect((await stack.request("GET", "/api/v4/profiles?pageSize=100", { key: mine })).body.totalItems).toBe(
    PROFILE_LIMIT,
  );
  // Another project is not held back by this one.
  expect((await stack.request("POST", "/api/v4/profiles", { key, body: {} })).status).toBe(created[0].status);

  expect((await stack.request("DELETE", `/api/v4/profiles/${created[0].body.id}`, { key: mine })).status).toBe(204);
  expect((await create()).status).toBe(created[0].status);
  expect((await create()).status).toBe(402);
}, 60_000);

test("profiles: read, rename, list, delete; an unknown or another project's profile is a 404 at browser creation", async () => {
  const profile = (await stack.request("POST", "/api/v3/profiles", { key, body: { name: "a" } })).body;
  // The creation answers what it recorded; the read model shows the same.
  const shown = await eventually(async () => {
    const read = await stack.request("GET", `/api/v3/profiles/${profile.id}`, { key });
    return read.status === 200 ? read.body : undefined;
  }, 10_000);
  expect(shown).toEqual(profile);
  const renamed = await stack.request("PATCH", `/api/v3/profiles/${profile.id}`, { key, body: { name: "b" } });
  expect(renamed.body).toMatchObject({ id: profile.id, name: "b", userId: null });
  const cleared = await stack.request("PATCH", `/api/v4/profiles/${profile.id}`, { key, body: { name: null } });
  expect(cleared.body.name).toBeNull();
  const listed = await stack.request("GET", "/api/v4/profiles?pageSize=100", { key });
  expect(listed.body).toMatchObject({ pageNumber: 1, pageSize: 100 });
  expect(listed.body.items.map((p: { id: string }) => p.id)).toContain(profile.id);

  const otherKey = await stack.newProjectKey();
  expect((await stack.request("GET", `/api/v4/profiles/${profile.id}`, { key: otherKey })).status).toBe(404);
  const foreign = await stack.request("POST", "/api/v4/browsers", { key: otherKey, body: { profileId: profile.id } });
  expect(foreign).toMatchObject({ status: 404, body: { detail: "Profile not found" } });
  const unknown = await stack.request("POST", "/api/v4/browsers", { key, body: { profileId: randomUUID() } });
  expect(unknown).toMatchObject({ status: 404, body: { detail: "Profile not found" } });

  expect((await stack.request("DELETE", `/api/v4/profiles/${profile.id}`, { key })).status).toBe(204);
  expect((await stack.request("GET", `/api/v4/profiles/${profile.id}`, { key })).status).toBe(404);
  const tooLong = await stack.request("POST", "/api/v4/profiles", { key, body: { name: "x".repeat(101) } });
  expect(tooLong.status).toBe(422);
  expect(tooLong.body.detail[0].loc).toEqual(["body", "name"]);
}, 60_000);

test("profiles are found by a piece of their name or user id, ignoring case; wildcards in it match only themselves", async () => {
  const mine = await stack.newProjectKey();
  const make = async (body: object) =>
    (await stack.request("POST", "/api/v4/profiles", { key: mine, body })).body.id as string;
  const alice = await make({ name: "Alice (shop)", userId: "u-100" });
  const bob = await make({ name: "Bob", userId: "U-100_b" });
  const percent = await make({ name: "50% off" });
  await make({ name: null });
  const found = async (query: string) => {
    const reply = await stack.request("GET", `/api/v4/profiles?query=${encodeURIComponent(query)}`, { key: mine });
    expect(reply.status).toBe(200);
    return [reply.body.items.map((p: { id: string }) => p.id).sort(), reply.body.totalItems];
  };
  expect(await found("alice")).toEqual([[alice], 1]);
  expect(await found("u-100")).toEqual([[alice, bob].sort(), 2]);
  expect(await found("0_b")).toEqual([[bob], 1]);
  expect(await found("%")).toEqual([[percent], 1]);
  expect(await found("_")).toEqual([[bob], 1]);
  expect(await found("nobody")).toEqual([[], 0]);
  expect((await stack.request("GET", "/api/v4/profiles", { key: mine })).body.totalItems).toBe(4);
  const tooLong = await stack.request("GET", `/api/v4/profiles?query=${"x".repeat(201)}`, { key: mine });
  expect([tooLong.status, tooLong.body.detail[0].loc]).toEqual([422, ["query", "query"]]);
});
