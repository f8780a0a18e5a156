import { IllegalStateError, LimitExceededError, NotFoundError } from "@bas/errors";
import type { SessionCommand } from "./commands";
import { created, dispatched, runningT1, spec } from "./decider-spec";
import type { MailData, SessionEvent } from "./events";
import { boundedMail, linksOf, MAILBOX_LIMITS, mailboxAddress } from "./mail";

const ADDRESS = "0123456789abcdef0123@mail.test";
const mail = (to = ADDRESS): MailData => ({
  from: "Shop <no-reply@shop.test>",
  to,
  subject: "Your code",
  date: null,
  text: "Your code is 482913",
  textTruncated: false,
  links: [],
  sizeBytes: 300,
});
const receive = (to = ADDRESS): SessionCommand => ({ type: "ReceiveMail", mail: mail(to) });
const withMailbox = (): SessionEvent[] => [created({ inbox: true, inboxEmail: ADDRESS }), dispatched("t1")];

describe("receiving mail", () => {
  test("a live session with a mailbox records the mail with an id, whatever the case of the address", () => {
    const events = spec(withMailbox()).when(receive(ADDRESS.toUpperCase()));
    expect(events).toEqual([{ type: "MailReceived", data: { mailId: "id-1", ...mail(ADDRESS.toUpperCase()) } }]);
  });

  test("mail counts, but does not move the inactivity clock", () => {
    const { state, after } = spec(withMailbox());
    const next = after(receive());
    expect(next).toMatchObject({ mailCount: 1, status: state.status });
    expect(next.status !== "none" && state.status !== "none" && next.updatedAt).toBe(
      state.status !== "none" && state.updatedAt,
    );
  });

  test("no session, a session without a mailbox, or another address: no such mailbox", () => {
    expect(() => spec([]).when(receive())).toThrow(NotFoundError);
    expect(() => spec(runningT1()).when(receive())).toThrow(NotFoundError);
    expect(() => spec(withMailbox()).when(receive("other@mail.test"))).toThrow(NotFoundError);
  });

  test("a session that ended or was deleted takes no more mail", () => {
    const stopped: SessionEvent = { type: "SessionStopped", data: { reason: "user" } };
    expect(() => spec([...withMailbox(), stopped]).when(receive())).toThrow(IllegalStateError);
    const deleted: SessionEvent = { type: "SessionDeleted", data: {} };
    expect(() => spec([...withMailbox(), stopped, deleted]).when(receive())).toThrow(NotFoundError);
  });

  test("a full mailbox refuses more", () => {
    const received: SessionEvent = { type: "MailReceived", data: { mailId: "m", ...mail() } };
    const full = [...withMailbox(), ...Array.from({ length: MAILBOX_LIMITS.mailsPerSession }, () => received)];
    expect(() => spec(full).when(receive())).toThrow(LimitExceededError);
  });
});

describe("bounding a mail", () => {
  test("the text is cut to the limit and says so; links come from the HTML first, then the text, each once", () => {
    const text = `Confirm: https://shop.test/verify?t=1. Or https://shop.test/help, ${"x".repeat(MAILBOX_LIMITS.textChars)}`;
    const html = `<p><a href="https://shop.test/verify?t=1&amp;u=2">Confirm</a> <a href='mailto:a@b'>mail</a></p>`;
    const bounded = boundedMail({
      from: "a@b",
      to: ADDRESS,
      subject: "s",
      date: new Date("2026-01-02T03:04:05Z"),
      text,
      html,
      sizeBytes: 40_000,
    });
    expect(bounded.text).toHaveLength(MAILBOX_LIMITS.textChars);
    expect(bounded.textTruncated).toBe(true);
    expect(bounded.date).toBe("2026-01-02T03:04:05.000Z");
    expect(bounded.links).toEqual([
      "https://shop.test/verify?t=1&u=2",
      "https://shop.test/verify?t=1",
      "https://shop.test/help",
    ]);
  });

  test("at most the link limit is kept", () => {
    const text = Array.from({ length: 80 }, (_, i) => `https://x.test/${i}`).join(" ");
    expect(linksOf(text, null)).toHaveLength(MAILBOX_LIMITS.links);
  });

  test("an address is the random part at the domain, lowercase", () => {
    expect(mailboxAddress("ABCDEF0123", "Mail.Example.com")).toBe("abcdef0123@mail.example.com");
  });
});
