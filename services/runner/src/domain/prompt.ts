import type { OutputMode } from "./actions";

/** A chat message as the model API takes it; images only in user messages. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatContentPart[] }
  | { role: "assistant"; content: string };

export type ChatContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

/** An earlier task of the same session and how it ended: the conversation a follow-up task continues. */
export interface EarlierTurn {
  task: string;
  outcome: string;
}

export interface StepPromptInput {
  task: string;
  /** Oldest first; empty for a session's first task. */
  earlierTurns: readonly EarlierTurn[];
  mode: OutputMode;
  /** Keys of `sensitiveData`; the values are never in a prompt. */
  secretKeys: readonly string[];
  /** The hosts some keys may only be typed on. */
  secretDomains?: Readonly<Record<string, readonly string[]>>;
  /** The only hosts the browser may reach; absent or empty = no limit. */
  allowedDomains?: readonly string[];
  /** A workspace is attached (the file tools are offered). */
  workspace?: boolean;
  /** Paths of workspace files the user attached to the task. */
  attachedFiles?: readonly string[];
  /** The session's temporary mailbox address (the mail tools are offered). */
  inboxEmail?: string;
  step: number;
  maxSteps: number;
  history: string;
  page: string;
  /** Things the model must fix now (a rejected answer, a wrong call). */
  notes: readonly string[];
  /** JPEG of the viewport, for models that take images. */
  screenshot?: Uint8Array;
  /** ISO date, so "today" means something. */
  today: string;
}

export function systemPrompt(mode: OutputMode): string {
  const lines = [
    "You are a browser agent. You complete the user's task by operating a real web browser, one step at a time.",
    "Each turn you get the task, the history of your earlier steps, and the current state of the browser: URL, tabs,",
    "scroll position and the page content in reading order, where interactive elements appear as [index]<tag ...>label.",
    "",
    "Rules:",
    "- Act only through the tools. Refer to elements by their [index] from the CURRENT page content; indexes of",
    "  elements that are no longer shown are invalid.",
    "- You may call several tools in one turn when they do not depend on a page change (e.g. fill several fields);",
    "  actions after a navigation are skipped, because you have not seen the new page yet.",
    "- After typing into a search box, press Enter (send_keys) or click the search button.",
    "- If something fails, read the error, then try another way; do not repeat the same failing action.",
    "- Use extract to read long pages or to answer questions from content that is not fully shown.",
    "- If the page needs time to load, use wait. Scroll to see content below the viewport.",
    "- Never invent information: report only what you saw in the browser.",
    "- When the task is complete, call done alone with success=true and the final answer. If it cannot be",
    "  completed, call done with success=false and explain why.",
  ];
  if (mode.outputSchema) {
    lines.push("- The final answer goes into done's `data`, exactly in the required JSON structure.");
  } else if (mode.codeMode) {
    lines.push("- The final answer goes into done's `text`. A replay script is produced from your actions.");
  } else {
    lines.push("- The final answer goes into done's `text`: complete, precise, ready to give to the user.");
  }
  return lines.join("\n");
}

/** The user message of one step: everything the model needs, rebuilt each step so history stays compact. */
export function stepMessages(input: StepPromptInput): ChatMessage[] {
  const sections: string[] = [];
  if (input.earlierTurns.length) {
    const turns = input.earlierTurns.map((t, i) => `${i + 1}. Task: ${t.task}\n   Result: ${t.outcome}`);
    sections.push(
      `<earlier_turns>\nThis task follows earlier ones in the same browser; they are done, do not repeat them:\n${turns.join("\n")}\n</earlier_turns>`,
    );
  }
  sections.push(`<task>\n${input.task}\n</task>`);
  if (input.mode.outputSchema) {
    sections.push(`<output_schema>\n${JSON.stringify(input.mode.outputSchema)}\n</output_schema>`);
  }
  if (input.allowedDomains?.length) {
    sections.push(
      `<allowed_domains>\nThe browser can reach only these hosts (a domain includes its subdomains); others are blocked: ${input.allowedDomains.join(", ")}\n</allowed_domains>`,
    );
  }
  if (input.workspace) {
    const attached = input.attachedFiles?.length
      ? `\nThe user attached these files of the workspace to this task: ${input.attachedFiles.join(", ")}`
      : "";
    sections.push(
      `<workspace>\nYou have a workspace: files shared with the user that outlive this task. list_files shows them, read_file reads one, write_file saves one (the user gets it), upload_file puts one into a page's file input.${attached}\n</workspace>`,
    );
  }
  if (input.inboxEmail) {
    sections.push(
      `<mailbox>\nYou have a temporary email address: ${input.inboxEmail}. Use it wherever an email address is asked for (sign-ups, verification). Mail sent to it can be read with list_emails and read_email; after asking a site to send mail (a code, a confirmation link), use wait_for_email.\n</mailbox>`,
    );
  }
  if (input.secretKeys.length) {
    sections.push(
      `<secrets>\nTo type a secret, write <secret>key</secret> in input_text; its value is filled in for you and is never shown. Keys: ${input.secretKeys.map((k) => (input.secretDomains?.[k] ? `${k} (only on ${input.secretDomains[k].join(", ")})` : k)).join(", ")}\n</secrets>`,
    );
  }
  sections.push(`<history>\n${input.history}\n</history>`);
  sections.push(`<browser_state>\n${input.page}\n</browser_state>`);
  const remaining = input.maxSteps - input.step;
  sections.push(
    `Step ${input.step} of at most ${input.maxSteps}. Today is ${input.today}.${remaining <= 2 ? " You are almost out of steps: call done now with what you have." : ""}`,
  );
  for (const note of input.notes) sections.push(`<important>\n${note}\n</important>`);
  const text = sections.join("\n\n");
  const content: string | ChatContentPart[] = input.screenshot
    ? [
        { type: "text", text },
        {
          type: "image_url",
          image_url: { url: `data:image/jpeg;base64,${Buffer.from(input.screenshot).toString("base64")}` },
        },
      ]
    : text;
  return [
    { role: "system", content: systemPrompt(input.mode) },
    { role: "user", content },
  ];
}

/** The prompt of `extract`: one question about the whole page content. */
export function extractMessages(question: string, url: string, content: string): ChatMessage[] {
  return [
    {
      role: "system",
      content:
        "You answer a question using only the web page content given. Be concise and exact; quote values as they appear. If the page does not contain the answer, say so.",
    },
    { role: "user", content: `<url>${url}</url>\n<page>\n${content}\n</page>\n<question>${question}</question>` },
  ];
}

/** Estimated tokens of a message's content (~4 characters per token; an image counts as ~800). */
export function estimateText(content: string | ChatContentPart[]): number {
  if (typeof content === "string") return Math.ceil(content.length / 4);
  return content.reduce((n, p) => n + (p.type === "text" ? Math.ceil(p.text.length / 4) : 800), 0);
}
