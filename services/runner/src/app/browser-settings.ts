import type { runner, sessions } from "@bas/proto";
import type { TaskReports } from "./attempt-reports";
import { StaleAttemptError } from "./ports";

/** The settings with the custom proxy's username and password filled in; without a custom proxy, as they are. */
export function withProxyCredentials(
  settings: sessions.BrowserSettings | undefined,
  credentials: sessions.ProxyCredentials | undefined,
): sessions.BrowserSettings | undefined {
  const proxy = settings?.customProxy;
  if (!settings || !proxy || !credentials) return settings;
  const { username, password } = credentials;
  return {
    ...settings,
    customProxy: {
      ...proxy,
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
    },
  };
}

/**
 * What to acquire the session's browser with: the assignment's settings, and for a custom proxy its credentials,
 * fetched with the task's secrets (the work queue never carries them). A task that has ended has no secrets any
 * more: the browser is asked for without them, and the attempt learns that its task ended from its next report.
 * The result holds the credentials: it is for browser-pool's request only, never for a log line.
 */
export async function browserSettingsFor(
  a: runner.TaskAssignment,
  reports: Pick<TaskReports, "taskSecrets">,
): Promise<sessions.BrowserSettings | undefined> {
  if (!a.browser?.customProxy) return a.browser;
  try {
    const secrets = await reports.taskSecrets({ sessionId: a.sessionId, taskId: a.taskId });
    return withProxyCredentials(a.browser, secrets.proxyCredentials);
  } catch (err) {
    if (err instanceof StaleAttemptError) return a.browser;
    throw err;
  }
}
