import { ServiceError } from "@bas/errors";

/** An error smtp-server turns into the reply `<responseCode> <message>`. */
export type SmtpRefusal = Error & { responseCode: number };

type Reason = "no_such_mailbox" | "mailbox_closed" | "mailbox_full" | "too_big" | "too_many_recipients" | "try_later";

const REPLIES: Record<Reason, [number, string]> = {
  no_such_mailbox: [550, "5.1.1 No such mailbox here"],
  mailbox_closed: [550, "5.2.1 This mailbox is closed: its session has ended"],
  mailbox_full: [552, "5.2.2 Mailbox full"],
  too_big: [552, "5.3.4 Message too big"],
  too_many_recipients: [452, "4.5.3 Too many recipients"],
  try_later: [451, "4.3.0 Temporary failure, try again later"],
};

function refusal(reason: Reason, detail?: string): SmtpRefusal {
  const [code, text] = REPLIES[reason];
  return Object.assign(new Error(detail ? `${text} (${detail})` : text), { responseCode: code });
}

/**
 * The SMTP reply for a reason, or for an error: a refusal as it is; the domain's refusals permanent (550 / 552); any
 * other failure (Postgres or NATS away) temporary, so the sender tries again later and no mail is lost.
 */
export function smtpRefusal(cause: Reason | unknown, maxBytes?: number): SmtpRefusal {
  if (typeof cause === "string") {
    return refusal(cause as Reason, cause === "too_big" && maxBytes ? `at most ${maxBytes} bytes` : undefined);
  }
  if (cause instanceof Error && typeof (cause as Partial<SmtpRefusal>).responseCode === "number") {
    return cause as SmtpRefusal;
  }
  if (cause instanceof ServiceError) {
    if (cause.kind === "not_found") return refusal("no_such_mailbox");
    if (cause.kind === "illegal_state") return refusal("mailbox_closed");
    if (cause.kind === "limit_exceeded") return refusal("mailbox_full");
  }
  return refusal("try_later");
}
