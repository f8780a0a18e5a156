import { randomUUID } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { BlobStore } from "@bas/blobs";
import { create, extract, Parser, type ReadEntry } from "tar";
import type { Launched, ProfileStates } from "../../app/ports";
import { type BrowserHandle, devtoolsSocketOf } from "../../domain/events";
import { connectCdp } from "../cdp/cdp-connection";
import { devtoolsUpstream } from "../cdp/devtools-json";
import { processGroupOf } from "../local/proc-fs";
import type { KeptStates } from "./kept-states";
import { heldInState } from "./state-contents";

/** Session cookies live only in memory: they travel in this file of the saved state, outside the folder's own. */
const COOKIES_FILE = "bas-cookies.json";
/** A saved state larger than this (compressed) is not kept: the profile keeps the state before. */
const MAX_STATE_BYTES = 200 * 1024 * 1024;
/** How long a closing browser may take to write its state out. */
const CLOSE_TIMEOUT_MS = 5_000;

/** The saved state of a browser in a pod: its cookies only (`.json`), as its folder is out of reach. */
const COOKIES_ONLY = /\.json$/;

/**
 * Profiles' saved states in the blob store, as gzipped tar archives of a local browser's folder (without caches),
 * with its cookies read over CDP (session cookies are never written to the folder). The node that saved a state
 * also keeps it unpacked (`kept`) for the next browser with the profile. A browser in a pod keeps its folder in the
 * pod, out of reach: its state is its cookies (sign-ins), read and put back over CDP; local storage and IndexedDB
 * stay behind. Either kind of state starts a browser of either driver, with what it holds.
 */
export function createProfileStates(
  blobs: BlobStore,
  kept: KeptStates,
  /** Told of each save before its bytes are stored and again once they are, so that one whose close never comes is swept. */
  saves: { expect(ref: string): Promise<void> },
): ProfileStates {
  /** A new blob for each save: the state before stays whole until the profile points at this one. */
  async function store(profileId: string, data: Uint8Array | Readable, kind: "json" | "tgz") {
    const ref = `${refPrefix(profileId)}${randomUUID()}.${kind}`;
    await saves.expect(ref);
    const stored = await blobs.put(data, {
      contentType: kind === "json" ? "application/json" : "application/gzip",
      ref,
    });
    await saves.expect(stored);
    return stored;
  }

  const cookiesToSet = new Map<string, unknown[]>();

  async function unpack(ref: string, userDataDir: string, uid: number | undefined) {
    const blob = await blobs.get(ref);
    if (!blob) throw new Error(`the profile's saved state ${ref} is missing from the blob store`);
    await pipeline(
      blob.stream,
      extract({
        cwd: userDataDir,
        strict: true,
        // Only plain files and folders: a link could lead out of the folder.
        filter: (_path, entry) => "type" in entry && (entry.type === "File" || entry.type === "Directory"),
        ...(uid !== undefined ? { uid, gid: uid, preserveOwner: false } : {}),
      }),
    );
  }

  const dropCopies = (profileId: string) => kept.drop(refPrefix(profileId));

  async function discard(ref: string) {
    await kept.drop(ref);
    await blobs.delete(ref);
  }

  /** The cookies a saved state holds, without unpacking it (a browser in a pod starts from them). */
  async function cookiesOf(ref: string): Promise<unknown[]> {
    const blob = await blobs.get(ref);
    if (!blob) throw new Error(`the profile's saved state ${ref} is missing from the blob store`);
    if (COOKIES_ONLY.test(ref)) return cookieList(await text(blob.stream));
    let cookies: Promise<string> = Promise.resolve("[]");
    const parser = new Parser({
      filter: (path) => path.replace(/^\.\//, "") === COOKIES_FILE,
      onReadEntry: (entry: ReadEntry) => {
        cookies = text(entry);
      },
    });
    await pipeline(blob.stream, parser);
    return cookieList(await cookies);
  }

  return {
    async restore(ref, userDataDir, uid) {
      if (COOKIES_ONLY.test(ref)) {
        cookiesToSet.set(userDataDir, await cookiesOf(ref));
        return;
      }
      if (!(await kept.take(ref, userDataDir, uid))) await unpack(ref, userDataDir, uid);
      const file = join(userDataDir, COOKIES_FILE);
      const cookies = await readFile(file, "utf8").catch(() => "[]");
      await rm(file, { force: true });
      cookiesToSet.set(userDataDir, cookieList(cookies));
    },

    async resume(ref, launched) {
      const { handle } = launched.running;
      let cookies: unknown[];
      if (handle.driver === "local") {
        cookies = cookiesToSet.get(handle.userDataDir) ?? [];
        cookiesToSet.delete(handle.userDataDir);
      } else cookies = await cookiesOf(ref);
      if (cookies.length === 0) return;
      const cdp = await connectCdp(devtoolsOf(handle));
      try {
        await cdp.send("Storage.setCookies", { cookies: cookies.map(asCookieParam) });
      } finally {
        cdp.close();
      }
    },

    async save(profileId, launched) {
      const { handle } = launched.running;
      if (handle.driver !== "local") {
        const cookies = await readCookies(handle);
        const ref = await store(profileId, Buffer.from(JSON.stringify(cookies)), "json");
        return { ref, cookieDomains: domainsOf(cookies) };
      }
      const { cookies, exited } = await closeBrowser(launched);
      await writeFile(join(handle.userDataDir, COOKIES_FILE), JSON.stringify(cookies));
      let bytes = 0;
      const capped = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done(
            bytes > MAX_STATE_BYTES ? new Error(`the profile's state is larger than ${MAX_STATE_BYTES} bytes`) : null,
            chunk,
          );
        },
      });
      const archive = create(
        {
          gzip: true,
          cwd: handle.userDataDir,
          portable: true,
          // Plain files and folders, without caches and per-run files.
          filter: (path, stat) => "isFile" in stat && heldInState(path, stat),
        },
        ["."],
      );
      const ref = await store(profileId, archive.pipe(capped), "tgz");
      // A browser still running (it did not close in time) may still write into its folder: that one is not kept.
      if (exited) await kept.keep(ref, handle.userDataDir);
      return { ref, cookieDomains: domainsOf(cookies) };
    },

    discard,

    async forget(profileId, stateRef) {
      await dropCopies(profileId);
      if (stateRef) await discard(stateRef);
    },

    dropCopies,

    async profilesWithCopies() {
      const ids = (await kept.refs()).map((ref) => PROFILE_OF_REF.exec(ref)?.[1]);
      return [...new Set(ids.filter((id) => id !== undefined))];
    },
  };
}

/** Every saved state of a profile has a ref of its own that starts so (profile ids are UUIDs). */
const refPrefix = (profileId: string) => `profile-${profileId}-`;
const PROFILE_OF_REF = /^profile-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-/;

/** Where this node reaches a browser's DevTools: a local one only through its sandbox's socket. */
const devtoolsOf = (handle: BrowserHandle) => devtoolsUpstream(handle.devtoolsUrl, devtoolsSocketOf(handle));

async function readCookies(handle: BrowserHandle): Promise<unknown[]> {
  const cdp = await connectCdp(devtoolsOf(handle));
  try {
    return (await cdp.send("Storage.getCookies")).cookies ?? [];
  } finally {
    cdp.close();
  }
}

const domainsOf = (cookies: unknown[]) => {
  const domains = cookies.map((c) => String((c as { domain?: string }).domain ?? "").replace(/^\./, ""));
  return [...new Set(domains.filter(Boolean))].sort();
};

function cookieList(json: string): unknown[] {
  const cookies = JSON.parse(json);
  return Array.isArray(cookies) ? cookies : [];
}

async function text(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/** A cookie as Storage.getCookies gave it, as Storage.setCookies takes it: a session cookie has no expiry. */
function asCookieParam(cookie: unknown): Record<string, unknown> {
  const { size: _size, session, expires, ...rest } = cookie as Record<string, unknown>;
  return session ? rest : { ...rest, expires };
}

/**
 * Reads the browser's cookies, then closes it so that it writes its storage out; resolves once it is gone, or
 * after `CLOSE_TIMEOUT_MS` (then `exited` is false).
 */
async function closeBrowser(launched: Launched): Promise<{ cookies: unknown[]; exited: boolean }> {
  const { handle } = launched.running;
  if (handle.driver !== "local") return { cookies: [], exited: false };
  let cookies: unknown[] = [];
  try {
    const cdp = await connectCdp(devtoolsOf(handle));
    try {
      cookies = (await cdp.send("Storage.getCookies")).cookies ?? [];
      await cdp.send("Browser.close").catch(() => undefined);
    } finally {
      cdp.close();
    }
  } catch {
    // A browser that crashed has nothing to say; its folder is saved as it is.
  }
  const deadline = Date.now() + CLOSE_TIMEOUT_MS;
  const gone = async () => (await processGroupOf(handle.pid)) === undefined;
  // The exit of a browser this process started ends the wait at once; one it adopted is looked for every 50 ms.
  const exit = new Promise<void>((resolve) => launched.running.onExit(() => resolve()));
  while (!(await gone()) && Date.now() < deadline) await Promise.race([exit, sleep(50)]);
  return { cookies, exited: await gone() };
}
