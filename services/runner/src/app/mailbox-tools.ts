import {
  type MailAction,
  type MailContent,
  type MailSummary,
  mailMatches,
  renderMail,
  renderMailList,
} from "../domain/mail-actions";
import { ToolError } from "./browser-errors";
import type { MailboxTools } from "./ports";

/** The session's mail, as the sessions service serves it (`Mailbox` in mailbox.proto). */
export interface MailboxReader {
  /** Newest first. */
  list(sessionId: string): Promise<MailSummary[]>;
  /** undefined: no such mail in this session. */
  get(sessionId: string, mailId: string): Promise<MailContent | undefined>;
}

export interface MailboxToolsDeps {
  reader: MailboxReader;
  sessionId: string;
  address: string;
  /** How often wait_for_email looks for new mail (default 500 ms). */
  pollMs?: number;
  now?: () => number;
}

const DEFAULT_WAIT_SECONDS = 30;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener("abort", aborted, { once: true });
  });
}

/**
 * The mail tools of one attempt at a task whose session has a temporary mailbox. `wait_for_email` returns mail that
 * is new to this attempt: the mail already there when the attempt began (an earlier task's verification mail, say)
 * is not waited for, nor a mail the agent has read since; a mail that came in before the wait started is. So "submit
 * the form, then wait" never misses a fast mail and never returns a stale one.
 */
export function createMailboxTools(deps: MailboxToolsDeps): MailboxTools {
  const { reader, sessionId, address } = deps;
  const now = deps.now ?? Date.now;
  const pollMs = deps.pollMs ?? 500;
  const snapshot = () => reader.list(sessionId).then((mails) => new Set(mails.map((m) => m.id)));
  // What was there when the attempt began; if it could not be read then, the first wait reads it (a mail that came
  // in between is then taken as old: list_emails still shows it).
  let before: Promise<Set<string> | undefined> = snapshot().catch(() => undefined);
  /** Mails the agent has read (read_email or a wait): a wait does not return them again. */
  const read = new Set<string>();

  async function open(mailId: string): Promise<string> {
    const mail = await reader.get(sessionId, mailId);
    if (!mail) throw new ToolError(`There is no email with id ${mailId}; list_emails shows the ids.`);
    read.add(mail.id);
    return renderMail(mail);
  }

  async function waitForMail(action: Extract<MailAction, { name: "wait_for_email" }>, signal: AbortSignal) {
    const seconds = action.seconds ?? DEFAULT_WAIT_SECONDS;
    const deadline = now() + seconds * 1000;
    let old = await before;
    if (!old) {
      old = await snapshot();
      before = Promise.resolve(old);
    }
    for (;;) {
      const mails = await reader.list(sessionId);
      // Oldest new mail first: two waits in a row give two mails in the order they came.
      const fresh = [...mails].reverse().find((m) => !old.has(m.id) && !read.has(m.id) && mailMatches(m, action));
      if (fresh) return open(fresh.id);
      const left = deadline - now();
      if (left <= 0) break;
      await sleep(Math.min(pollMs, left), signal);
    }
    const filters = [
      action.from ? `from "${action.from}"` : "",
      action.subject ? `with "${action.subject}" in the subject` : "",
    ].filter(Boolean);
    throw new ToolError(
      `No new email${filters.length ? ` ${filters.join(" ")}` : ""} arrived at ${address} within ${seconds} s. Check that the site was given this address, or wait again.`,
    );
  }

  return {
    async run(action, signal) {
      switch (action.name) {
        case "list_emails":
          return renderMailList(address, await reader.list(sessionId));
        case "read_email":
          return open(action.id);
        case "wait_for_email":
          return waitForMail(action, signal);
      }
    },
  };
}
