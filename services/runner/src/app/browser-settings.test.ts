import type { runner, sessions } from "@bas/proto";
import type { TaskReports } from "./attempt-reports";
import { browserSettingsFor, withProxyCredentials } from "./browser-settings";
import { StaleAttemptError, SupersededAttemptError } from "./ports";

const PROXY = { host: "proxy.example", port: 3128, ignoreCertErrors: false };
const settings = (customProxy?: sessions.CustomProxy): sessions.BrowserSettings => ({
  proxyCountryCode: "us",
  allowedDomains: [],
  record: false,
  ...(customProxy ? { customProxy } : {}),
});
const assignment = (browser: sessions.BrowserSettings) =>
  ({ sessionId: "s1", taskId: "t1", browser }) as runner.TaskAssignment;

/** The sessions service's GetTaskSecrets, answering `answer` and counting calls. */
function reportsAnswering(answer: () => Promise<sessions.TaskSecrets>) {
  const calls: sessions.GetTaskSecretsRequest[] = [];
  const reports: Pick<TaskReports, "taskSecrets"> = {
    taskSecrets: (req) => {
      calls.push(req);
      return answer();
    },
  };
  return { reports, calls };
}

describe("withProxyCredentials", () => {
  test("fills in what the credentials have, and leaves settings without a custom proxy alone", () => {
    expect(withProxyCredentials(settings(PROXY), { username: "u", password: "p" })).toEqual(
      settings({ ...PROXY, username: "u", password: "p" }),
    );
    expect(withProxyCredentials(settings(PROXY), { username: "u" })?.customProxy).toEqual({ ...PROXY, username: "u" });
    expect(withProxyCredentials(settings(PROXY), undefined)).toEqual(settings(PROXY));
    expect(withProxyCredentials(settings(), { username: "u", password: "p" })).toEqual(settings());
    expect(withProxyCredentials(undefined, { username: "u" })).toBeUndefined();
  });

  test("never changes the assignment's own settings", () => {
    const own = settings(PROXY);
    withProxyCredentials(own, { username: "u", password: "p" });
    expect(own.customProxy).toEqual(PROXY);
  });
});

describe("browserSettingsFor", () => {
  test("a custom proxy gets the credentials the sessions service keeps for the task", async () => {
    const { reports, calls } = reportsAnswering(async () => ({
      values: { pin: "1" },
      proxyCredentials: { username: "u", password: "p" },
    }));
    const a = assignment(settings(PROXY));
    expect(await browserSettingsFor(a, reports)).toEqual(settings({ ...PROXY, username: "u", password: "p" }));
    expect(calls).toEqual([{ sessionId: "s1", taskId: "t1" }]);
    expect(a.browser?.customProxy).toEqual(PROXY);
  });

  test("without a custom proxy nothing is fetched", async () => {
    const { reports, calls } = reportsAnswering(async () => ({ values: {} }));
    expect(await browserSettingsFor(assignment(settings()), reports)).toEqual(settings());
    expect(calls).toHaveLength(0);
  });

  test("a task that has ended (its secrets gone) gets the proxy without credentials; other failures are thrown", async () => {
    for (const err of [new StaleAttemptError("ended"), new SupersededAttemptError("superseded")]) {
      const { reports } = reportsAnswering(() => Promise.reject(err));
      expect(await browserSettingsFor(assignment(settings(PROXY)), reports)).toEqual(settings(PROXY));
    }
    const none = reportsAnswering(async () => ({ values: {} }));
    expect(await browserSettingsFor(assignment(settings(PROXY)), none.reports)).toEqual(settings(PROXY));
    const down = reportsAnswering(() => Promise.reject(new Error("sessions unavailable")));
    await expect(browserSettingsFor(assignment(settings(PROXY)), down.reports)).rejects.toThrow("sessions unavailable");
  });
});
