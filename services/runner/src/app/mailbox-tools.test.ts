import type { MailContent } from "../domain/mail-actions";
import { ToolError } from "./browser-errors";
import { createMailboxTools, type MailboxReader } from "./mailbox-tools";

const ADDRESS = "abc123@mail.test";

/** A mailbox the test fills; newest first, as the sessions service lists it. */
function fakeMailbox() {
  const mails: MailContent[] = [];
  let n = 0;
  const reader: MailboxReader = {
    list: async () =>
      [...mails].reverse().map(({ id, from, subject, receivedAt, text }) => ({
        id,
        from,
        subject,
        receivedAt,
        preview: text.slice(0, 50),
      })),
    get: async (_session, id) => mails.find((m) => m.id === id),
  };
  return {
    reader,
    arrive(subject: string, text: string, from = "Shop <no-reply@shop.test>") {
      mails.push({
        id: `mail-${++n}`,
        from,
        to: ADDRESS,
        subject,
        receivedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
        text,
        textTruncated: false,
        links: [`https://shop.test/verify/${n}`],
      });
    },
  };
}

const tools = (reader: MailboxReader, now?: () => number) =>
  createMailboxTools({ reader, sessionId: "s1", address: ADDRESS, pollMs: 1, ...(now ? { now } : {}) });
const signal = () => new AbortController().signal;

test("list_emails shows every mail newest first, or says there is none", async () => {
  const box = fakeMailbox();
  const t = tools(box.reader);
  expect(await t.run({ name: "list_emails" }, signal())).toBe(`No emails have arrived at ${ADDRESS} yet.`);
  box.arrive("First", "one");
  box.arrive("Second", "two");
  const listed = await t.run({ name: "list_emails" }, signal());
  expect(listed.indexOf("Second")).toBeLessThan(listed.indexOf("First"));
  expect(listed).toContain("id mail-1");
});

test("read_email gives sender, subject, links and text; an unknown id is the model's error", async () => {
  const box = fakeMailbox();
  box.arrive("Your code", "Your code is 482913");
  const t = tools(box.reader);
  const mail = await t.run({ name: "read_email", id: "mail-1" }, signal());
  expect(mail).toContain("Subject: Your code");
  expect(mail).toContain("- https://shop.test/verify/1");
  expect(mail).toContain("Your code is 482913");
  await expect(t.run({ name: "read_email", id: "nope" }, signal())).rejects.toThrow(ToolError);
});

test("wait_for_email skips what was there when the attempt began and returns new mail in the order it came", async () => {
  const box = fakeMailbox();
  box.arrive("Old code", "Your code is 111111");
  const t = tools(box.reader);
  // Mail that comes in before the wait starts is still new to this attempt.
  box.arrive("Newsletter", "hello", "News <news@shop.test>");
  box.arrive("Your code", "Your code is 222222");
  const waited = t.run({ name: "wait_for_email", subject: "code" }, signal());
  expect(await waited).toContain("222222");
  expect(await t.run({ name: "wait_for_email" }, signal())).toContain("hello");
});

test("wait_for_email waits for a mail that arrives later", async () => {
  const box = fakeMailbox();
  const t = tools(box.reader);
  const waited = t.run({ name: "wait_for_email", from: "shop.test" }, signal());
  setTimeout(() => box.arrive("Welcome", "Your code is 333333"), 20);
  expect(await waited).toContain("333333");
});

test("wait_for_email without new mail ends at its timeout with an error for the model", async () => {
  const box = fakeMailbox();
  let clock = 0;
  const t = tools(box.reader, () => (clock += 250));
  await expect(t.run({ name: "wait_for_email", seconds: 2, from: "bank" }, signal())).rejects.toThrow(
    new ToolError(
      `No new email from "bank" arrived at ${ADDRESS} within 2 s. Check that the site was given this address, or wait again.`,
    ),
  );
});

test("wait_for_email stops when the task is stopped", async () => {
  const box = fakeMailbox();
  const t = tools(box.reader);
  const stop = new AbortController();
  const waited = t.run({ name: "wait_for_email", seconds: 60 }, stop.signal);
  setTimeout(() => stop.abort(new Error("stopped")), 20);
  await expect(waited).rejects.toThrow("stopped");
});
