import { secretKeysIn } from "./secrets";

/** A short title for a task, shown in lists: its first sentence, cut at a word boundary. */
export function titleOf(task: string, maxLength = 60): string {
  let text = task.replace(/\s+/g, " ").trim();
  for (const key of secretKeysIn(text)) text = text.replaceAll(`<secret>${key}</secret>`, key);
  if (!text) return "Browser session";
  const sentence = /^(.{12,}?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  const title = sentence.length <= maxLength ? sentence : `${sentence.slice(0, maxLength).replace(/\s+\S*$/, "")}…`;
  return title.charAt(0).toUpperCase() + title.slice(1);
}
