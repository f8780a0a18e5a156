import { status } from "@grpc/grpc-js";
import { mailbox } from "@bas/proto";
import { connectClient, type PromiseClient } from "@bas/service-kit";
import { scrapeMetrics, sumOf } from "@bas/testing";
import { createTransport } from "nodemailer";
import { createRequest, failure, type Harness, newProject, startHarness } from "./harness";
import { probeSmtp } from "./support/smtp-probe";

/** Small, so that an oversized mail is cheap to send. */
const MAX_BYTES = 20_000;

let h: Harness;
let mail: PromiseClient<mailbox.MailboxClient>;
beforeAll(async () => {
  h = await startHarness({ SMTP_MAX_MESSAGE_BYTES: String(MAX_BYTES) });
  mail = connectClient(mailbox.MailboxClient, `127.0.0.1:${h.service.grpcPort}`);
});
afterAll(async () => {
  mail?.close();
  await h?.close();
});

const project = newProject();

/** Sends one message over SMTP as any mail server would; rejects with the server's reply (`responseCode`). */
function send(message: { to: string; subject?: string; text?: string; html?: string; from?: string }) {
  const transport = createTransport({ host: "127.0.0.1", port: h.service.smtpPort, secure: false, ignoreTLS: true });
  return transport
    .sendMail({ from: "Shop <no-reply@shop.test>", subject: "Hello", ...message })
    .finally(() => transport.close());
}

async function refusal(sending: Promise<unknown>): Promise<{ responseCode?: number; response?: string }> {
  try {
    await sending;
  } catch (err) {
    return err as { responseCode?: number };
  }
  throw new Error("the mail was accepted but should have been refused");
}

async function sessionWithMailbox() {
  const created = await h.api.createSession(createRequest(project, { task: "Sign up", inbox: true }));
  return { id: created.id, address: created.inboxEmail! };
}

test("a session with the mailbox option gets its own unguessable address; its task's assignment carries it", async () => {
  const created = await h.api.createSession(createRequest(project, { task: "Sign up on the shop", inbox: true }));
  expect(created.inboxEmail).toMatch(/^[0-9a-f]{20}@mail\.test$/);
  const work = await h.takeAssignment();
  expect(work).toMatchObject({ sessionId: created.id, inboxEmail: created.inboxEmail });
  expect((await h.api.getSession({ projectId: project, sessionId: created.id })).inboxEmail).toBe(created.inboxEmail);

  const other = await h.api.createSession(createRequest(project, { task: "Sign up", inbox: true }));
  expect(other.inboxEmail).not.toBe(created.inboxEmail);
  const without = await h.api.createSession(createRequest(project, { task: "Browse" }));
  expect(without.inboxEmail).toBeUndefined();
});

test("mail over SMTP to a live session is kept: sender, subject, text, links; listed newest first", async () => {
  const { id, address } = await sessionWithMailbox();
  const sent = await send({
    to: address,
    subject: "Your verification code",
    text: "Your code is 482913. Or confirm at https://shop.test/verify?token=abc.",
    html: '<p>Your code is <b>482913</b>. <a href="https://shop.test/verify?token=abc&amp;src=mail">Confirm</a></p>',
  });
  expect(sent.accepted).toEqual([address]);
  // Recorded before the 250: readable at once.
  const listed = await mail.listMail({ sessionId: id });
  expect(listed.mails).toHaveLength(1);
  expect(listed.mails[0]).toMatchObject({
    from: '"Shop" <no-reply@shop.test>',
    subject: "Your verification code",
    preview: "Your code is 482913. Or confirm at https://shop.test/verify?token=abc.",
  });
  const full = await mail.getMail({ sessionId: id, mailId: listed.mails[0].id });
  expect(full).toMatchObject({ sessionId: id, to: address, textTruncated: false });
  expect(full.text).toContain("Your code is 482913");
  expect(full.links).toEqual(["https://shop.test/verify?token=abc&src=mail", "https://shop.test/verify?token=abc"]);

  await send({ to: address.toUpperCase(), subject: "Welcome", html: "<h1>Welcome!</h1><p>Thanks for joining.</p>" });
  const both = await mail.listMail({ sessionId: id });
  expect(both.mails.map((m) => m.subject)).toEqual(["Welcome", "Your verification code"]);
  // A mail with only HTML is read as its text.
  const html = await mail.getMail({ sessionId: id, mailId: both.mails[0].id });
  expect(html.text).toMatch(/WELCOME!\s+Thanks for joining\./i);

  expect((await failure(mail.getMail({ sessionId: id, mailId: "no-such-mail" }))).code).toBe(status.NOT_FOUND);
});

test("without a certificate the receiver offers neither STARTTLS nor AUTH", async () => {
  const { extensions } = await probeSmtp(h.service.smtpPort);
  expect(extensions).toContain(`SIZE ${MAX_BYTES}`);
  expect(extensions.filter((e) => /^(STARTTLS|AUTH)/.test(e))).toEqual([]);
});

test("mail to an address no session has is refused at RCPT TO (550)", async () => {
  const refused = await refusal(send({ to: `0123456789abcdef0123@mail.test`, text: "hi" }));
  expect(refused.responseCode).toBe(550);
  const elsewhere = await refusal(send({ to: "someone@example.com", text: "relay me" }));
  expect(elsewhere.responseCode).toBe(550);
});

test("mail to a session that has ended is refused (550), and nothing is kept", async () => {
  const { id, address } = await sessionWithMailbox();
  await send({ to: address, text: "before the end" });
  await h.api.stopSession({ projectId: project, sessionId: id, strategy: "session" });
  const refused = await refusal(send({ to: address, text: "after the end" }));
  expect(refused.responseCode).toBe(550);
  expect(refused.response).toMatch(/closed/);
  expect((await mail.listMail({ sessionId: id })).mails.map((m) => m.preview)).toEqual(["before the end"]);
});

test("a message over the size limit is refused (552), and nothing is kept", async () => {
  const { id, address } = await sessionWithMailbox();
  const refused = await refusal(send({ to: address, text: "x".repeat(MAX_BYTES * 2) }));
  expect(refused.responseCode).toBe(552);
  expect(refused.response).toMatch(/too big/);
  expect((await mail.listMail({ sessionId: id })).mails).toEqual([]);
});

test("/metrics counts the mailboxes' SMTP replies by stage and code", async () => {
  const replies = async () => {
    const samples = await scrapeMetrics(h.service.metricsPort);
    const count = (stage: string, code: string) =>
      sumOf(samples, "bas_mailbox_replies_total", { service: "sessions", stage, code }) ?? 0;
    return { rcptTaken: count("rcpt", "250"), taken: count("data", "250"), noSuchMailbox: count("rcpt", "550") };
  };
  const before = await replies();
  const { address } = await sessionWithMailbox();
  await send({ to: address, text: "counted" });
  expect((await refusal(send({ to: "nobody@mail.test" }))).responseCode).toBe(550);
  const after = await replies();
  expect({
    rcptTaken: after.rcptTaken - before.rcptTaken,
    taken: after.taken - before.taken,
    noSuchMailbox: after.noSuchMailbox - before.noSuchMailbox,
  }).toEqual({ rcptTaken: 1, taken: 1, noSuchMailbox: 1 });
});
