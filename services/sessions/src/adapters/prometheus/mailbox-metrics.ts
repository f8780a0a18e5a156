import { Counter, type Registry } from "prom-client";

/**
 * The mailboxes' SMTP replies, by stage and code: `250` taken, `550` / `552` / `452` refused for good (no such or
 * ended mailbox, too big or full, too many recipients), `451` a failure of ours the sender retries (Postgres or NATS
 * away): the one to alert on.
 */
export function createMailboxMetrics(registry: Registry) {
  const replies = new Counter({
    name: "bas_mailbox_replies_total",
    help: "SMTP replies of the temporary mailboxes, to a recipient (rcpt) or a message (data), by code.",
    labelNames: ["stage", "code"] as const,
    registers: [registry],
  });
  return {
    reply: (stage: "rcpt" | "data", code: number) => replies.inc({ stage, code: String(code) }),
  };
}
