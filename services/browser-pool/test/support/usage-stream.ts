import { billing } from "@bas/proto";
import type { TestInfra } from "@bas/testing";

/** Every UsageRecorded on the test's usage stream, with the subject it came on. */
export async function usageMessages(
  infra: TestInfra,
): Promise<Array<{ subject: string; usage: billing.UsageRecorded; msgId?: string }>> {
  const info = await infra.jsm.streams.info(infra.streams.usage.stream);
  const out = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await infra.jsm.streams.getMessage(infra.streams.usage.stream, { seq }).catch(() => null);
    if (!m) continue;
    out.push({
      subject: m.subject,
      usage: billing.UsageRecorded.fromJSON(m.json()),
      msgId: m.header?.get("Nats-Msg-Id"),
    });
  }
  return out;
}
