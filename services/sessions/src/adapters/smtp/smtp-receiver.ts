import type { AddressInfo } from "node:net";
import type { Logger } from "@bas/service-kit";
import { type AddressObject, simpleParser } from "mailparser";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import type { MailIntake } from "../../app/mailbox";
import { boundedMail } from "../../domain/mail";
import { smtpRefusal } from "./smtp-replies";
import { readTlsPair, type TlsFiles, watchTlsPair } from "./smtp-tls";

export interface SmtpReceiverOptions {
  host: string;
  /** 0 picks a free one (tests). */
  port: number;
  /** The domain of the mailbox addresses: also the name the server greets with. */
  domain: string;
  /** The largest message taken (bytes): SIZE is advertised, and a bigger one is refused with 552. */
  maxBytes: number;
  /** Recipients one message may have; more are refused with 452 (the sender sends them again separately). */
  maxRecipients: number;
  /** Connections at once. */
  maxClients: number;
  intake: MailIntake;
  log: Logger;
  /** Told of every reply to a recipient (`rcpt`) or a message (`data`), by its SMTP code (metrics). */
  onReply?: (stage: "rcpt" | "data", code: number) => void;
  /** With a certificate, STARTTLS is offered (senders encrypt if they can); its files are read again when renewed. */
  tls?: TlsFiles & { checkEveryMs?: number };
}

export interface SmtpReceiver {
  port: number;
  close(): Promise<void>;
}

const fromOf = (from: AddressObject | undefined, envelopeFrom: string) => from?.text || envelopeFrom || "";

/**
 * The SMTP side of the temporary mailboxes: a receiver (no relay, no AUTH; STARTTLS when it has a certificate, see
 * docs/mailbox.md) that takes mail only for the address of a session that has not ended
 * (others: 550 at RCPT TO), up to `maxBytes` (else 552), and answers 250 only once the mail is recorded on every
 * session it was for.
 */
export async function startSmtpReceiver(options: SmtpReceiverOptions): Promise<SmtpReceiver> {
  const { intake, log } = options;

  async function onRcptTo(address: string, session: SMTPServerSession) {
    if (session.envelope.rcptTo.length >= options.maxRecipients) throw smtpRefusal("too_many_recipients");
    const check = await intake.checkRecipient(address);
    if (!check.ok) throw smtpRefusal(check.reason === "unknown" ? "no_such_mailbox" : "mailbox_closed");
  }

  async function onData(stream: SMTPServerDataStream, session: SMTPServerSession) {
    // The whole message is read (the protocol needs it), but no more than the limit is kept.
    const chunks: Buffer[] = [];
    let kept = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (kept + chunk.length <= options.maxBytes) chunks.push(chunk);
      kept += chunk.length;
    }
    if (stream.sizeExceeded || kept > options.maxBytes) throw smtpRefusal("too_big", options.maxBytes);
    const parsed = await simpleParser(Buffer.concat(chunks), { skipImageLinks: true });
    const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
    let delivered = 0;
    let refusal: Error | undefined;
    for (const { address } of session.envelope.rcptTo) {
      const check = await intake.checkRecipient(address);
      if (!check.ok) {
        refusal = smtpRefusal(check.reason === "unknown" ? "no_such_mailbox" : "mailbox_closed");
        continue;
      }
      const mail = boundedMail({
        from: fromOf(parsed.from, envelopeFrom),
        to: address.toLowerCase(),
        subject: parsed.subject ?? "",
        date: parsed.date ?? null,
        text: parsed.text ?? "",
        html: typeof parsed.html === "string" ? parsed.html : null,
        sizeBytes: kept,
      });
      try {
        await intake.deliver(check.sessionId, mail);
        delivered++;
      } catch (err) {
        refusal = smtpRefusal(err);
        if ((refusal as { responseCode?: number }).responseCode === 451) {
          log.warn({ err, sessionId: check.sessionId }, "could not record a mail");
        }
      }
    }
    // One reply for the message: 250 when it reached a mailbox (the sessions that ended meanwhile drop it, as a
    // closed mailbox would have refused it), else why not.
    if (delivered === 0) throw refusal ?? smtpRefusal("no_such_mailbox");
    log.debug({ recipients: session.envelope.rcptTo.length, delivered, bytes: kept }, "mail received");
  }

  const replied = (stage: "rcpt" | "data", code: number) => options.onReply?.(stage, code);
  const refused = (stage: "rcpt" | "data", err: unknown) => {
    const refusal = smtpRefusal(err);
    replied(stage, refusal.responseCode);
    return refusal;
  };

  const tls = options.tls;
  const server = new SMTPServer({
    name: options.domain,
    banner: "temporary mailboxes",
    size: options.maxBytes,
    authOptional: true,
    ...(tls ? { ...readTlsPair(tls), disabledCommands: ["AUTH"] } : { disabledCommands: ["AUTH", "STARTTLS"] }),
    disableReverseLookup: true,
    maxClients: options.maxClients,
    logger: false,
    onRcptTo(address, session, callback) {
      onRcptTo(address.address, session).then(
        () => {
          replied("rcpt", 250);
          callback();
        },
        (err) => callback(refused("rcpt", err)),
      );
    },
    onData(stream, session, callback) {
      onData(stream, session).then(
        () => {
          replied("data", 250);
          callback();
        },
        (err) => {
          // The rest of the message must still be read, or the connection stalls.
          stream.resume();
          callback(refused("data", err));
        },
      );
    },
  });
  server.on("error", (err) => log.warn({ err }, "SMTP connection error"));
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.server.off("error", reject);
      resolve();
    });
  });
  const stopWatching = tls
    ? watchTlsPair(
        tls,
        tls.checkEveryMs ?? 60_000,
        (pair) => {
          server.updateSecureContext(pair);
          log.info({ certFile: tls.certFile }, "SMTP receiver took its renewed certificate");
        },
        (err) => log.warn({ err }, "SMTP receiver keeps its certificate: the changed files are not a usable pair yet"),
      )
    : () => undefined;
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    close: () => {
      stopWatching();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
