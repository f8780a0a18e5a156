import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findChromium } from "@bas/embedded-infra";
import puppeteer, { type Browser } from "puppeteer-core";
import { type CdpProxy, startCdpProxy } from "../src/adapters/cdp/cdp-proxy";
import { cdpUrlFor, newCdpSecret } from "../src/domain/cdp-route";

/**
 * A browser handed out before it is ready (a warm one whose window is still being fitted): callers' CDP connections
 * wait in the proxy until it is, and are refused if it never becomes so.
 */
let chromium: Browser;
let proxy: CdpProxy;
let profile: string;

beforeAll(async () => {
  profile = mkdtempSync(join(tmpdir(), "bas-cdp-ready-"));
  chromium = await puppeteer.launch({
    executablePath: findChromium(),
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--remote-debugging-port=0"],
  });
  proxy = await startCdpProxy({ host: "127.0.0.1", port: 0 });
}, 30_000);

afterAll(async () => {
  await proxy?.close();
  await chromium?.close();
  rmSync(profile, { recursive: true, force: true });
});

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Registers Chromium under a new id with the given readiness; answers the URL a caller would be given. */
function register(ready: Promise<void>): string {
  const browserId = randomUUID();
  const secret = newCdpSecret();
  const publicUrl = cdpUrlFor(`ws://127.0.0.1:${proxy.port}`, browserId, secret);
  proxy.register({ browserId, secret, devtoolsUrl: chromium.wsEndpoint(), publicUrl, ready });
  return publicUrl;
}

const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

/** What connecting came to (puppeteer rejects with an event, not an Error, when the handshake is refused). */
const outcome = (connecting: Promise<Browser>) =>
  connecting.then(
    async (client) => {
      await client.disconnect();
      return "connected";
    },
    (err: { message: string }) => `refused: ${err.message}`,
  );

test("a connection waits until the browser is ready, then works as any other", async () => {
  const ready = deferred();
  const url = register(ready.promise);
  const connecting = puppeteer.connect({ browserWSEndpoint: url, defaultViewport: null });
  expect(await settledWithin(connecting, 300)).toBe(false);
  ready.resolve();
  const client = await connecting;
  expect(await client.version()).toMatch(/Chrome/);
  await client.disconnect();
  // Once ready, nothing waits.
  const again = await puppeteer.connect({ browserWSEndpoint: url, defaultViewport: null });
  expect(await again.version()).toMatch(/Chrome/);
  await again.disconnect();
});

test("a browser that never becomes ready refuses the connections that waited for it, and later ones", async () => {
  const ready = deferred();
  const url = register(ready.promise);
  const connecting = puppeteer.connect({ browserWSEndpoint: url, defaultViewport: null });
  expect(await settledWithin(connecting, 300)).toBe(false);
  ready.reject(new Error("the window could not be fitted"));
  expect(await outcome(connecting)).toBe("refused: Unexpected server response: 404");
  expect(await outcome(puppeteer.connect({ browserWSEndpoint: url, defaultViewport: null }))).toBe(
    "refused: Unexpected server response: 404",
  );
});
