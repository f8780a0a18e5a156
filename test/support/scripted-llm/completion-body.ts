import { DEFAULT_USAGE, type ScriptedReply } from "./types";

/** Ids and the clock are passed in so the bodies stay a pure function of the script. */
export interface CompletionContext {
  id: string;
  model: string;
  created: number;
  nextCallId: () => string;
}

interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

function wireToolCalls(reply: ScriptedReply, ctx: CompletionContext): WireToolCall[] | undefined {
  if (!reply.toolCalls?.length) return undefined;
  return reply.toolCalls.map((call) => ({
    id: call.id ?? ctx.nextCallId(),
    type: "function",
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
}

function finishReason(reply: ScriptedReply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? "tool_calls" : "stop");
}

function wireUsage(reply: ScriptedReply) {
  const usage = reply.usage ?? DEFAULT_USAGE;
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** A `chat.completion` object as OpenAI returns it for `stream: false`. */
export function completionBody(reply: ScriptedReply, ctx: CompletionContext) {
  const toolCalls = wireToolCalls(reply, ctx);
  return {
    id: ctx.id,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.content ?? null,
          refusal: null,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(reply),
      },
    ],
    usage: wireUsage(reply),
  };
}

/** The `chat.completion.chunk` objects for `stream: true`; usage comes last when asked with `include_usage`. */
export function completionChunks(reply: ScriptedReply, ctx: CompletionContext, includeUsage: boolean) {
  const base = { id: ctx.id, object: "chat.completion.chunk", created: ctx.created, model: ctx.model };
  const chunk = (delta: object, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks: object[] = [chunk({ role: "assistant", content: reply.content ? "" : null }, null)];
  if (reply.content) {
    // Two pieces, so clients that forget to concatenate deltas are caught.
    const half = Math.ceil(reply.content.length / 2);
    chunks.push(chunk({ content: reply.content.slice(0, half) }, null));
    if (half < reply.content.length) chunks.push(chunk({ content: reply.content.slice(half) }, null));
  }
  wireToolCalls(reply, ctx)?.forEach((call, index) => {
    const args = call.function.arguments;
    const half = Math.ceil(args.length / 2);
    chunks.push(
      chunk(
        {
          tool_calls: [
            {
              index,
              id: call.id,
              type: "function",
              function: { name: call.function.name, arguments: args.slice(0, half) },
            },
          ],
        },
        null,
      ),
    );
    if (half < args.length)
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, null));
  });
  chunks.push(chunk({}, finishReason(reply)));
  if (includeUsage) chunks.push({ ...base, choices: [], usage: wireUsage(reply) });
  return chunks;
}
