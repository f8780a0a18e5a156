import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import type { CallParams, ModelRoute } from "../../domain/model-routes";
import { type ChatRequest, type ChatResult, ModelError } from "../../app/ports";

export interface OpenAiChatOptions {
  /** Per attempt. */
  timeoutMs: number;
  /** The SDK retries connection errors, 408/409/429/5xx with exponential backoff and honours Retry-After. */
  maxRetries: number;
}

export interface ChatTarget extends CallParams {
  route: ModelRoute;
  /** The key to send (the service's or the project's own). */
  apiKey: string | undefined;
}

/** Chat completions with tool calling through the official `openai` SDK, against any OpenAI-compatible endpoint. */
export class OpenAiChat {
  private readonly clients = new Map<string, OpenAI>();

  constructor(private readonly options: OpenAiChatOptions) {}

  private client(baseUrl: string, apiKey: string | undefined): OpenAI {
    const id = `${baseUrl}\u0000${apiKey ?? ""}`;
    let client = this.clients.get(id);
    if (!client) {
      client = new OpenAI({
        baseURL: baseUrl,
        // Keyless local endpoints (Ollama) still need a value for the SDK.
        apiKey: apiKey || "none",
        timeout: this.options.timeoutMs,
        maxRetries: this.options.maxRetries,
      });
      if (this.clients.size > 100) this.clients.clear();
      this.clients.set(id, client);
    }
    return client;
  }

  async complete(target: ChatTarget, request: ChatRequest): Promise<ChatResult> {
    const { route } = target;
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: route.model,
      messages: request.messages as ChatCompletionCreateParamsNonStreaming["messages"],
      ...(request.tools?.length
        ? { tools: request.tools, tool_choice: route.toolChoice, parallel_tool_calls: true }
        : {}),
      ...(target.reasoningEffort ? { reasoning_effort: target.reasoningEffort as "low" } : {}),
      ...(target.temperature !== undefined ? { temperature: target.temperature } : {}),
      ...(target.topP !== undefined ? { top_p: target.topP } : {}),
      // Reasoning models refuse max_tokens: their cap is max_completion_tokens.
      ...(target.maxOutputTokens
        ? route.reasoning
          ? { max_completion_tokens: target.maxOutputTokens }
          : { max_tokens: target.maxOutputTokens }
        : {}),
    };
    // A signal of its own per call: the task's signal lives for many calls, and listeners the SDK adds to it would
    // pile up on it.
    const controller = new AbortController();
    const abort = () => controller.abort(request.signal?.reason);
    if (request.signal?.aborted) abort();
    request.signal?.addEventListener("abort", abort, { once: true });
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client(route.baseUrl, target.apiKey).chat.completions.create(body, {
        signal: controller.signal,
      });
    } catch (err) {
      if (request.signal?.aborted) throw err;
      if (err instanceof OpenAI.APIError) {
        const detail = (err.error as { message?: string } | undefined)?.message ?? err.message;
        throw new ModelError(`the model endpoint answered ${err.status ?? "with an error"}: ${detail}`, err.status, {
          cause: err,
        });
      }
      throw new ModelError(`the model endpoint failed: ${(err as Error).message}`, undefined, { cause: err });
    } finally {
      request.signal?.removeEventListener("abort", abort);
    }
    const choice = completion.choices?.[0];
    const message = choice?.message;
    const toolCalls = (message?.tool_calls ?? [])
      .filter((c) => c.type === "function")
      .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments ?? "" }));
    return {
      content: message?.content ?? null,
      toolCalls,
      usage: {
        inputTokens: completion.usage?.prompt_tokens ?? 0,
        outputTokens: completion.usage?.completion_tokens ?? 0,
      },
    };
  }
}
