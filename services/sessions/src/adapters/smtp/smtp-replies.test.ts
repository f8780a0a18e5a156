import { IllegalStateError, LimitExceededError, NotFoundError } from "@bas/errors";
import { smtpRefusal } from "./smtp-replies";

const reply = (cause: unknown) => {
  const err = smtpRefusal(cause);
  return `${err.responseCode} ${err.message}`;
};

test("the domain's refusals are permanent: no such mailbox, a closed one, a full one", () => {
  expect(reply(new NotFoundError("No such mailbox"))).toBe("550 5.1.1 No such mailbox here");
  expect(reply(new IllegalStateError("the session is stopped"))).toBe(
    "550 5.2.1 This mailbox is closed: its session has ended",
  );
  expect(reply(new LimitExceededError("the mailbox is full"))).toBe("552 5.2.2 Mailbox full");
});

test("anything else (Postgres or NATS away) is temporary, so the sender tries again and no mail is lost", () => {
  expect(reply(new Error("connect ECONNREFUSED 127.0.0.1:5432"))).toBe("451 4.3.0 Temporary failure, try again later");
});

test("a reply already made passes through; a too-big message names the limit", () => {
  const made = smtpRefusal("too_many_recipients");
  expect(smtpRefusal(made)).toBe(made);
  expect(reply(made)).toBe("452 4.5.3 Too many recipients");
  expect(`${smtpRefusal("too_big", 1000).responseCode} ${smtpRefusal("too_big", 1000).message}`).toBe(
    "552 5.3.4 Message too big (at most 1000 bytes)",
  );
});
