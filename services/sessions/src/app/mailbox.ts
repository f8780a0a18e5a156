import { NotFoundError } from "@bas/errors";
import type { MailData } from "../domain/events";
import type { MailboxQueries, MailRecord } from "./ports";
import type { SessionCommands } from "./session-commands";

/** Whether a recipient address may be given mail: a live session's mailbox, an ended one's, or none at all. */
export type RecipientCheck = { ok: true; sessionId: string } | { ok: false; reason: "unknown" | "closed" };

/** What the SMTP receiver needs: who an address is, and recording a mail for it. */
export interface MailIntake {
  checkRecipient(address: string): Promise<RecipientCheck>;
  /**
   * Records the mail on the session (the `MailReceived` event is appended before this resolves, so the SMTP 250 is
   * only said for mail that is kept), and waits a little for the read models to show it. Refused with the domain's errors: NotFoundError (no such mailbox),
   * IllegalStateError (the session ended meanwhile), LimitExceededError (mailbox full).
   */
  deliver(sessionId: string, mail: MailData): Promise<void>;
}

/** What the runner's mail tools read. */
export interface MailReads {
  list(sessionId: string): Promise<MailRecord[]>;
  get(sessionId: string, mailId: string): Promise<MailRecord>;
}

/**
 * The temporary mailboxes. The address check at RCPT TO reads the read model (fast, and the create and the stop of a
 * session wait for it, so a caller never sees an address that is not known yet or an end that is not yet seen);
 * the aggregate has the last word when the mail is recorded.
 */
export function createMailbox(deps: { commands: SessionCommands; queries: MailboxQueries }): MailIntake & MailReads {
  return {
    async checkRecipient(address) {
      const owner = await deps.queries.owner(address);
      if (!owner) return { ok: false, reason: "unknown" };
      return owner.open ? { ok: true, sessionId: owner.sessionId } : { ok: false, reason: "closed" };
    },
    async deliver(sessionId, mail) {
      // Durable once appended; the answer also waits (boundedly) for the read models, so that a mail its sender saw
      // accepted is one the agent can read.
      await deps.commands.execute(sessionId, { type: "ReceiveMail", mail });
    },
    list: (sessionId) => deps.queries.list(sessionId),
    async get(sessionId, mailId) {
      const mail = await deps.queries.get(sessionId, mailId);
      if (!mail) throw new NotFoundError(`No email with id ${mailId}`);
      return mail;
    },
  };
}
