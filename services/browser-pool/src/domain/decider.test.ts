import type { CommandContext, EventEnvelope } from "@bas/event-store";
import { fold } from "@bas/event-store";
import { IllegalStateError, NotFoundError } from "@bas/errors";
import { type BrowserCommand, browserDecider } from "./decider";
import type { BrowserEvent, BrowserHandle, BrowserRequested } from "./events";
import { WARM_SETTINGS } from "./browser-settings";
import { viewFromState } from "./browser-view";

const context: CommandContext = { now: new Date("2030-01-01T00:00:00Z"), newId: () => "id" };
const handle: BrowserHandle = {
  driver: "local",
  devtoolsUrl: "ws://127.0.0.1:9222/devtools/browser/x",
  devtoolsSocket: "/tmp/.sockets/b/devtools.sock",
  pid: 42,
  userDataDir: "/tmp/b",
  proxyPort: null,
};
const request: BrowserRequested["data"] = {
  projectId: "p",
  sessionId: null,
  settings: WARM_SETTINGS,
  timeoutMinutes: 60,
  timeoutAt: "2030-01-01T01:00:00.000Z",
  metadata: { a: "b" },
  nodeId: "n1",
  cdpSecret: "s",
  cdpUrl: "ws://x/cdp/id/s",
};

/** Stored events, one second apart from 2030-01-01T00:00:00Z. */
const stored = (events: BrowserEvent[]): EventEnvelope<BrowserEvent>[] =>
  events.map(
    (e, at) =>
      ({
        ...e,
        id: `e${at}`,
        aggregateType: "browser",
        aggregateId: "b1",
        occurredAt: new Date(Date.UTC(2030, 0, 1, 0, 0, at)).toISOString(),
      }) as EventEnvelope<BrowserEvent>,
  );

/** given events, when a command: the events decided. */
const given = (events: BrowserEvent[]) => ({
  when: (command: BrowserCommand) => browserDecider.decide(command, fold(browserDecider, stored(events)), context),
});

const requested: BrowserEvent = { type: "BrowserRequested", data: request };
const started: BrowserEvent = { type: "BrowserStarted", data: { nodeId: "n1", handle, warm: false } };
const stopped: BrowserEvent = {
  type: "BrowserStopped",
  data: { reason: "caller", detail: null, cdpBytesIn: 1, cdpBytesOut: 2 },
};

test("request: a new browser is requested; a warm one is requested and started in the same decision", () => {
  expect(given([]).when({ type: "RequestBrowser", request })).toEqual([requested]);
  expect(given([]).when({ type: "RequestBrowser", request, launched: { handle } })).toEqual([
    requested,
    { type: "BrowserStarted", data: { nodeId: "n1", handle, warm: true } },
  ]);
  expect(() => given([requested]).when({ type: "RequestBrowser", request })).toThrow(IllegalStateError);
});

test("start: recorded once; a browser stopped while it launched records nothing (the launcher tears it down)", () => {
  expect(given([requested]).when({ type: "RecordStarted", nodeId: "n1", handle })).toEqual([started]);
  expect(given([requested, started]).when({ type: "RecordStarted", nodeId: "n1", handle })).toEqual([]);
  expect(given([requested, stopped]).when({ type: "RecordStarted", nodeId: "n1", handle })).toEqual([]);
  expect(() => given([]).when({ type: "RecordStarted", nodeId: "n1", handle })).toThrow(NotFoundError);
});

test("stop: from requested or active, once; stopping a stopped browser decides nothing; an unknown one is not found", () => {
  const stop: BrowserCommand = { type: "StopBrowser", reason: "timeout" };
  const expected = [
    { type: "BrowserStopped", data: { reason: "timeout", detail: null, cdpBytesIn: 0, cdpBytesOut: 0 } },
  ];
  expect(given([requested]).when(stop)).toEqual(expected);
  expect(given([requested, started]).when(stop)).toEqual(expected);
  expect(given([requested, started, stopped]).when(stop)).toEqual([]);
  expect(() => given([]).when(stop)).toThrow(NotFoundError);
});

test("the view follows the state: active while launching or running, stopped with finishedAt and reason", () => {
  const launching = fold(browserDecider, stored([requested]));
  expect(viewFromState("b1", launching)).toMatchObject({ status: "active", finishedAt: null, stopReason: null });
  const running = fold(browserDecider, stored([requested, started]));
  expect(viewFromState("b1", running)).toMatchObject({
    status: "active",
    startedAt: new Date("2030-01-01T00:00:01.000Z"),
    metadata: { a: "b" },
    proxyUsedMb: "0",
  });
  const ended = fold(browserDecider, stored([requested, started, stopped]));
  expect(ended).toMatchObject({ status: "stopped", reason: "caller", handle });
  expect(viewFromState("b1", ended)).toMatchObject({
    status: "stopped",
    finishedAt: new Date("2030-01-01T00:00:02.000Z"),
  });
});
