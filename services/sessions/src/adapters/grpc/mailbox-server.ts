import type { mailbox } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import type { MailReads } from "../../app/mailbox";
import type { MailRecord } from "../../app/ports";
import { sessionIdOf } from "./requests";

/** How much of a mail's text a list shows. */
const PREVIEW_CHARS = 200;

const preview = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 3)}...` : flat;
};

const toProtoMail = (m: MailRecord): mailbox.Mail => ({ ...m, date: m.date ?? undefined });

/** The runner-facing `Mailbox` service: the mail of a session's temporary mailbox. */
export function mailboxServer(reads: MailReads, log?: HandlerLog): mailbox.MailboxServer {
  return unaryService(
    {
      listMail: async (req: mailbox.ListMailRequest): Promise<mailbox.ListMailResponse> => ({
        mails: (await reads.list(sessionIdOf(req.sessionId))).map((m) => ({
          id: m.id,
          from: m.from,
          subject: m.subject,
          receivedAt: m.receivedAt,
          preview: preview(m.text),
        })),
      }),
      getMail: async (req: mailbox.GetMailRequest): Promise<mailbox.Mail> =>
        toProtoMail(await reads.get(sessionIdOf(req.sessionId), req.mailId)),
    },
    log,
  );
}
