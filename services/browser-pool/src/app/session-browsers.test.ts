import { IllegalStateError } from "@bas/errors";
import type { BrowserView } from "../domain/browser-view";
import { createSessionBrowsers } from "./session-browsers";

/** The pool and its read model as the session browsers see them: one browser per create, stopped on stop. */
function world() {
  const browsers: BrowserView[] = [];
  const sessionBrowsers = createSessionBrowsers({
    pool: {
      create: async (input) => {
        const view = { id: `b${browsers.length + 1}`, projectId: input.projectId, status: "active" } as BrowserView;
        browsers.push({ ...view, sessionId: input.sessionId } as BrowserView);
        return { view, secret: "s" } as never;
      },
      stop: async (id) => {
        const b = browsers.find((x) => x.id === id)!;
        (b as { status: string }).status = "stopped";
        return b;
      },
      caughtUp: async () => undefined,
    },
    readModel: {
      latestForSession: async (sessionId) => {
        const view = browsers.filter((b) => (b as { sessionId?: string }).sessionId === sessionId).at(-1);
        return view ? ({ view, cdpSecret: "s" } as never) : undefined;
      },
    },
    cdpInternalUrl: "ws://pool",
    timeoutMinutes: 60,
  });
  return { browsers, sessionBrowsers };
}

test("a session that ended gets no new browser, unless it was reopened: then a new one", async () => {
  const { browsers, sessionBrowsers } = world();
  const first = await sessionBrowsers.acquire({ projectId: "p", sessionId: "s1" });
  expect((await sessionBrowsers.acquire({ projectId: "p", sessionId: "s1" })).view.id).toBe(first.view.id);
  await sessionBrowsers.endSession("s1");
  // A runner that lost its browser at the session's end must not get another one nobody would stop.
  await expect(sessionBrowsers.acquire({ projectId: "p", sessionId: "s1" })).rejects.toThrow(IllegalStateError);
  const reopened = await sessionBrowsers.acquire({ projectId: "p", sessionId: "s1", reopened: true });
  expect(reopened.view.id).not.toBe(first.view.id);
  expect(browsers.map((b) => [b.id, b.status])).toEqual([
    ["b1", "stopped"],
    ["b2", "active"],
  ]);
});
