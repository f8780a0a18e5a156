import type { RecordedRequest, ScriptedHttpError, ScriptedReply, ScriptedToolCall } from "./types";

type ReplyOptions = Omit<ScriptedReply, "content" | "toolCalls">;

/** An assistant message with plain text. */
export function textReply(content: string, options: ReplyOptions = {}): ScriptedReply {
  return { content, ...options };
}

/** An assistant message with one tool call; `args` as a string is sent verbatim (use it for invalid JSON). */
export function toolCallReply(
  name: string,
  args: Record<string, unknown> | string,
  options: ReplyOptions & { content?: string } = {},
): ScriptedReply {
  const { content, ...rest } = options;
  return { content: content ?? null, toolCalls: [{ name, arguments: args }], ...rest };
}

/** An assistant message with several tool calls at once. */
export function toolCallsReply(calls: ScriptedToolCall[], options: ReplyOptions = {}): ScriptedReply {
  return { content: null, toolCalls: calls, ...options };
}

/** An HTTP error; without a body, an OpenAI-shaped error body is sent. */
export function httpError(status: number, options: { body?: unknown; headers?: Record<string, string> } = {}) {
  return { httpError: { status, ...options } } satisfies ScriptedHttpError;
}

/** Every message's text content in a recorded request, joined: what the model was shown (tool results included). */
export function promptText(request: RecordedRequest): string {
  const messages: any[] = request.body?.messages ?? [];
  return messages.map(messageText).join("\n");
}

/** The text of the last message with role `user` or `tool`: usually the current page observation. */
export function lastInputText(request: RecordedRequest): string {
  const messages: any[] = request.body?.messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === "user" || m.role === "tool");
  return last ? messageText(last) : "";
}

/**
 * The [index] the agent showed the model for an element line matching `pattern` (e.g. /<button>Search/): the first,
 * or the `nth` (counting round).
 */
export function indexOf(request: RecordedRequest, pattern: RegExp, nth = 0): number {
  const text = lastInputText(request);
  const found: number[] = [];
  for (const line of text.split("\n")) {
    const match = /^\[(\d+)\](.*)$/.exec(line);
    if (match && pattern.test(match[2])) found.push(Number(match[1]));
  }
  if (!found.length) throw new Error(`no element matching ${pattern} in the observation:\n${text.slice(0, 3000)}`);
  return found[nth % found.length];
}

/** Names of the tools the request offered the model. */
export function offeredTools(request: RecordedRequest): string[] {
  const tools: any[] = request.body?.tools ?? [];
  return tools.map((t) => t.function?.name).filter((n): n is string => typeof n === "string");
}

function messageText(message: any): string {
  const parts: string[] = [];
  if (typeof message.content === "string") parts.push(message.content);
  else if (Array.isArray(message.content)) {
    for (const part of message.content) if (part?.type === "text") parts.push(part.text);
  }
  for (const call of message.tool_calls ?? []) parts.push(`${call.function?.name}(${call.function?.arguments})`);
  return parts.join("\n");
}
