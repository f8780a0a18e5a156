import { billing } from "@bas/proto";
import type { JsMsg } from "@nats-io/jetstream";
import type { Usage } from "../../domain/usage";

/** Reads a USAGE message (JSON of bas.v1.UsageRecorded, trace context in its headers); undefined when it is not one. */
export function parseUsage(m: Pick<JsMsg, "seq" | "json" | "headers">): Usage | undefined {
  let raw: unknown;
  try {
    raw = m.json();
  } catch {
    return undefined;
  }
  if (!raw || typeof raw !== "object") return undefined;
  const u = billing.UsageRecorded.fromJSON(raw);
  const traceparent = m.headers?.get("traceparent");
  const scope = {
    id: u.id,
    sequence: m.seq,
    projectId: u.projectId,
    ...(u.sessionId ? { sessionId: u.sessionId } : {}),
    ...(u.runId ? { runId: u.runId } : {}),
    ...(u.browserId ? { browserId: u.browserId } : {}),
    ...(u.lastReport && u.browserId ? { lastReport: true } : {}),
    ...(traceparent ? { traceparent } : {}),
  };
  if (u.llm) {
    const { model, inputTokens, outputTokens, ownKey } = u.llm;
    return { ...scope, kind: "llm", model, inputTokens, outputTokens, ownKey };
  }
  if (u.proxy) return { ...scope, kind: "proxy", bytes: u.proxy.bytes };
  if (u.browser) return { ...scope, kind: "browser", milliseconds: u.browser.milliseconds };
  return undefined;
}
