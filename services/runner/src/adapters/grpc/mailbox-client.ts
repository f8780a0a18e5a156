import { status } from "@grpc/grpc-js";
import { mailbox } from "@bas/proto";
import { ClientError, connectClient, retry } from "@bas/service-kit";
import type { MailboxReader } from "../../app/mailbox-tools";
import type { OutagePolicy } from "../../app/ports";

export interface MailboxClient extends MailboxReader {
  close(): void;
}

/**
 * The sessions service's `Mailbox` API (the mail of a session's temporary mailbox). While the service is unavailable
 * a read waits and is tried again with backoff, up to the outage grace, as the runner's reports do.
 */
export function connectMailbox(address: string, outage: OutagePolicy): MailboxClient {
  const client = connectClient(mailbox.MailboxClient, address, 10_000);
  const call = <T>(fn: () => Promise<T>) =>
    retry(fn, {
      graceMs: outage.graceMs,
      onRetry: (err, { waitedMs }) => outage.onWait?.("sessions", err, waitedMs),
    });
  return {
    async list(sessionId) {
      return (await call(() => client.listMail({ sessionId }))).mails.map((m) => ({
        ...m,
        receivedAt: m.receivedAt ?? new Date(0),
      }));
    },
    async get(sessionId, mailId) {
      try {
        const m = await call(() => client.getMail({ sessionId, mailId }));
        return { ...m, receivedAt: m.receivedAt ?? new Date(0) };
      } catch (err) {
        if (err instanceof ClientError && err.code === status.NOT_FOUND) return undefined;
        throw err;
      }
    },
    close: () => client.close(),
  };
}
