import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BrowserUse, BrowserUseError } from "browser-use-sdk/v3";
import { BrowserUse as BrowserUseV4 } from "browser-use-sdk/v4";
import puppeteer from "puppeteer-core";
import { z } from "zod";
import { promptText, toolCallReply } from "../../support/scripted-llm";
import type { CallerStack } from "./containerized-stack";

/**
 * The official TypeScript client (`browser-use-sdk`, pinned in package.json) pointed at this service, used the way its
 * README shows: only the base URL and the key differ from the hosted service. It sends its key as
 * X-Browser-Use-API-Key, polls, pages messages and uploads files its own way; whatever it cannot parse or finds
 * missing fails here. These are its checks against the stack `startStack` brings up (`setupTimeoutMs`: how long that
 * may take); `afterStack` runs once the stack is closed.
 */
export function officialClientSuite(
  startStack: () => Promise<CallerStack>,
  options: { setupTimeoutMs?: number; afterStack?: () => Promise<void> } = {},
): void {
  let stack: CallerStack;
  let v3: BrowserUse;
  let v4: BrowserUseV4;
  let dir: string;
  beforeAll(async () => {
    stack = await startStack();
    v3 = new BrowserUse({ apiKey: stack.apiKey, baseUrl: `${stack.baseUrl}/api/v3`, maxRetries: 0 });
    v4 = new BrowserUseV4({ apiKey: stack.apiKey, baseUrl: `${stack.baseUrl}/api/v4`, maxRetries: 0 });
    dir = mkdtempSync(join(tmpdir(), "official-client-"));
  }, options.setupTimeoutMs);
  afterAll(async () => {
    await stack?.close();
    await options.afterStack?.();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The scripted model's two steps: open the Pixelon 8's page, then answer with the price it shows. */
  function scriptPriceLookup(
    done: (price: string) => Record<string, unknown> = (price) => ({ success: true, text: `It costs ${price}.` }),
  ) {
    stack.llm.script("gpt-4o", [
      toolCallReply("go_to_url", { url: `${stack.sites.url}/shop/product/pixelon-8` }),
      (req) => toolCallReply("done", done(/\$\d+\.\d\d/.exec(promptText(req))?.[0] ?? "no price seen")),
    ]);
  }

  // The client's model type lists the hosted models; the scripted one is routed here under an OpenAI name.
  const model = "gpt-4o" as never;
  const FAST = { interval: 100, timeout: 60_000 };

  test("v3 client.run: awaited, it polls the session to its end and returns the answer; with a zod schema, typed", async () => {
    scriptPriceLookup();
    const result = await v3.run("What does the Pixelon 8 cost?", { model, ...FAST });
    expect(result).toMatchObject({
      status: "stopped",
      output: "It costs $699.00.",
      isTaskSuccessful: true,
      stepCount: 2,
    });

    scriptPriceLookup((price) => ({ success: true, data: { name: "Pixelon 8", price: Number(price.slice(1)) } }));
    // The client brings its own zod (a different 4.x), so its types do not accept ours; at run time they work together.
    const Product = z.object({ name: z.string(), price: z.number() }) as never;
    const typed = await v3.run("Name and price of the Pixelon 8", { model, schema: Product, ...FAST });
    expect(typed.output).toEqual({ name: "Pixelon 8", price: 699 });
  });

  test("v3 client.run on a kept-alive session: iterating the follow-up yields its own messages only, then the result", async () => {
    scriptPriceLookup();
    const first = await v3.run("What does the Pixelon 8 cost?", { model, keepAlive: true, ...FAST });
    expect(first.status).toBe("idle");

    scriptPriceLookup();
    const followUp = v3.run("And once more: what does it cost?", { model, sessionId: first.id, ...FAST });
    const seen: Array<{ role: string; type: string; data: string }> = [];
    for await (const message of followUp) seen.push(message);
    // The client snapshots where the conversation is (the last message of `limit=1`) before it sends the task.
    expect(seen[0]).toMatchObject({ role: "human", type: "user_message", data: "And once more: what does it cost?" });
    expect(seen.map((m) => m.data)).not.toContain("What does the Pixelon 8 cost?");
    expect(followUp.result).toMatchObject({ id: first.id, output: "It costs $699.00.", status: "idle" });
    await v3.sessions.stop(first.id);
  });

  test("v3 browsers, account and errors through the client: a browser to drive over CDP, stopped; a 404 as BrowserUseError", async () => {
    const browser = await v3.browsers.create({});
    expect(browser).toMatchObject({ status: "active", recordingAvailable: false });
    const cdp = await puppeteer.connect({ browserWSEndpoint: browser.cdpUrl!, defaultViewport: null });
    const [page] = await cdp.pages();
    await page.goto(`${stack.sites.url}/shop/product/pixelon-8`);
    expect(await page.content()).toContain("$699.00");
    await cdp.disconnect();

    const active = await v3.browsers.list({ filterBy: "active" });
    expect(active.items.map((b) => b.id)).toContain(browser.id);
    expect((await v3.browsers.stop(browser.id)).status).toBe("stopped");
    expect((await v3.browsers.get(browser.id)).finishedAt).not.toBeNull();

    const account = await v3.billing.account();
    expect(account).toMatchObject({ name: "default", planInfo: { planName: "self-hosted" } });

    const missing = await v3.sessions.get("0b8f8a5e-1d2c-4e8b-9f1a-3c5d7e9f1a2b").catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(BrowserUseError);
    expect(missing).toMatchObject({ statusCode: 404, detail: { detail: "Session not found" } });
  });

  test("v3 workspaces: a local file uploaded with the client, listed, downloaded byte for byte, deleted", async () => {
    const workspace = await v3.workspaces.create({ name: "client files" });
    const local = join(dir, "orders.csv");
    writeFileSync(local, "sku,qty\nA-1,3\n");
    expect(await v3.workspaces.upload(workspace.id, local, { prefix: "in/" })).toEqual(["in/orders.csv"]);
    const target = join(dir, "back", "orders.csv");
    expect(await v3.workspaces.download(workspace.id, "in/orders.csv", { to: target })).toBe(target);
    expect(readFileSync(target, "utf8")).toBe("sku,qty\nA-1,3\n");
    expect(await v3.workspaces.size(workspace.id)).toMatchObject({ usedBytes: 14 });
    await v3.workspaces.deleteFile(workspace.id, "in/orders.csv");
    expect((await v3.workspaces.files(workspace.id)).files).toEqual([]);
    await v3.workspaces.delete(workspace.id);
  });

  test("v4 client: a run pointed to an uploaded file, waited for, its attachments and events; the workspace managed", async () => {
    const workspace = await v4.workspaces.create({ name: "v4 client" });
    const local = join(dir, "wishlist.txt");
    writeFileSync(local, "Pixelon 8\n");
    const uploaded = await v4.workspaces.upload(workspace.id, local);
    expect(uploaded).toEqual([expect.objectContaining({ name: "wishlist.txt", path: "uploads/wishlist.txt" })]);

    scriptPriceLookup();
    const created = await v4.runs.create({
      task: "What does the phone on my wish list cost?",
      model,
      workspaceId: workspace.id,
      attachedFileIds: uploaded.map((f) => f.id),
    });
    const run = await v4.runs.waitForCompletion(created.id, FAST);
    expect(run).toMatchObject({ status: "completed", result: "It costs $699.00." });
    expect((await v4.runs.attachments(run.id)).attachments).toEqual([
      { id: uploaded[0].id, name: "wishlist.txt", contentType: "text/plain", sizeBytes: 10, status: "uploaded" },
    ]);
    const { events } = await v4.runs.events(run.id);
    expect(events.map((e) => e.type)).toContain("run.completed");
    expect(await v4.runs.waitForEvent(run.id, "run.started", FAST)).toMatchObject({ runId: run.id });

    expect(await v4.workspaces.update(workspace.id, { name: "renamed" })).toMatchObject({ name: "renamed" });
    expect(await v4.workspaces.size(workspace.id)).toMatchObject({ usedBytes: 10 });
    await v4.workspaces.deleteFile(workspace.id, "uploads/wishlist.txt");
    expect((await v4.workspaces.files(workspace.id)).files).toEqual([]);
    await v4.workspaces.delete(workspace.id);
    await expect(v4.workspaces.get(workspace.id)).rejects.toMatchObject({ statusCode: 404 });
  });
}
