import { z } from "zod";
import { clip } from "./clip";

/** Tools of a task whose session has a temporary mailbox: the mail that arrived at its address. */
export const mailActionSchemas = {
  list_emails: z.object({}).describe("List the emails received at your temporary address, newest first."),
  read_email: z
    .object({ id: z.string().min(1).describe("The id of an email from list_emails") })
    .describe("Read one email: sender, subject, text and the links in it."),
  wait_for_email: z
    .object({
      seconds: z.number().min(1).max(120).optional().describe("How long to wait at most (default 30)"),
      from: z.string().optional().describe("Only mail whose sender contains this"),
      subject: z.string().optional().describe("Only mail whose subject contains this"),
    })
    .describe(
      "Wait until an email you have not read yet arrives at your temporary address during this task (e.g. a verification code), then read it.",
    ),
} as const;

export type MailAction =
  | { name: "list_emails" }
  | { name: "read_email"; id: string }
  | { name: "wait_for_email"; seconds?: number; from?: string; subject?: string };

const MAIL_ACTIONS = new Set<string>(Object.keys(mailActionSchemas));

export function isMailAction(action: { name: string }): action is MailAction {
  return MAIL_ACTIONS.has(action.name);
}

/** A mail as the list shows it. */
export interface MailSummary {
  id: string;
  from: string;
  subject: string;
  receivedAt: Date;
  preview: string;
}

/** A mail in full. */
export interface MailContent extends Omit<MailSummary, "preview"> {
  to: string;
  text: string;
  textTruncated: boolean;
  links: string[];
}

/**
 * Characters of a mail's text the model is shown, and of each link. An action's result reaches the model through
 * the step history, which keeps about 4,000 characters of it: the text (where the code is) comes before the links.
 */
export const MAIL_TEXT_CHARS = 2_500;
export const MAIL_LINK_CHARS = 300;

/** Whether a mail passes wait_for_email's filters (case-insensitive parts of the sender and the subject). */
export function mailMatches(mail: Pick<MailSummary, "from" | "subject">, filter: { from?: string; subject?: string }) {
  const has = (value: string, part?: string) => !part || value.toLowerCase().includes(part.toLowerCase());
  return has(mail.from, filter.from) && has(mail.subject, filter.subject);
}

export function renderMailList(address: string, mails: readonly MailSummary[]): string {
  if (mails.length === 0) return `No emails have arrived at ${address} yet.`;
  const lines = mails.map(
    (m) =>
      `- id ${m.id} | ${m.receivedAt.toISOString()} | from ${clip(m.from, 120)} | subject: ${clip(m.subject, 160) || "(none)"}${m.preview ? ` | ${clip(m.preview, 160)}` : ""}`,
  );
  return `${mails.length} email(s) at ${address}, newest first (read one with read_email):\n${lines.join("\n")}`;
}

export function renderMail(mail: MailContent): string {
  const lines = [
    `Email ${mail.id}`,
    `From: ${mail.from}`,
    `To: ${mail.to}`,
    `Subject: ${mail.subject || "(none)"}`,
    `Received: ${mail.receivedAt.toISOString()}`,
  ];
  const cut = mail.textTruncated || mail.text.length > MAIL_TEXT_CHARS;
  lines.push(`Text:\n${clip(mail.text, MAIL_TEXT_CHARS) || "(empty)"}${cut ? "\n(the text was cut)" : ""}`);
  if (mail.links.length) lines.push(`Links:\n${mail.links.map((l) => `- ${clip(l, MAIL_LINK_CHARS)}`).join("\n")}`);
  return lines.join("\n");
}
