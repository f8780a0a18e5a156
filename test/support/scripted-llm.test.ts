import OpenAI from "openai";
import {
  httpError,
  lastInputText,
  promptText,
  type ScriptedLlm,
  startScriptedLlm,
  textReply,
  toolCallReply,
} from "./scripted-llm";

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "click", parameters: { type: "object", properties: { index: { type: "number" } } } },
  },
];

describe("scripted LLM server through the real openai SDK", () => {
  let llm: ScriptedLlm;
  beforeAll(async () => {
    llm = await startScriptedLlm();
  });
  afterAll(() => llm.close());

  const client = (apiKey: string, baseURL = llm.url) => new OpenAI({ apiKey, baseURL, maxRetries: 2 });

  it("answers tool calls with usage, in script order, selected by API key", async () => {
    llm.script("tools", [
      toolCallReply("click", { index: 7 }, { usage: { promptTokens: 321, completionTokens: 12 } }),
      textReply("all done"),
    ]);
    const openai = client("tools");
    const first = await openai.chat.completions.create({
      model: "whatever",
      messages: [{ role: "user", content: "click the button" }],
      tools,
    });
    const call = first.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("click");
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({ index: 7 });
    expect(first.choices[0].finish_reason).toBe("tool_calls");
    expect(first.usage).toEqual({ prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 });

    const second = await openai.chat.completions.create({
      model: "whatever",
      messages: [{ role: "user", content: "and?" }],
    });
    expect(second.choices[0].message.content).toBe("all done");
    expect(second.choices[0].finish_reason).toBe("stop");

    const recorded = llm.requests("tools");
    expect(recorded.map((r) => r.stepIndex)).toEqual([0, 1]);
    expect(recorded[0].headers.authorization).toBe("Bearer tools");
    expect(recorded[0].body.tools[0].function.name).toBe("click");
    expect(lastInputText(recorded[1])).toBe("and?");
  });

  it("delivers invalid JSON arguments verbatim", async () => {
    llm.script("broken-json", [toolCallReply("click", '{"index": 3,,')]);
    const res = await client("broken-json").chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    const call = res.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.arguments).toBe('{"index": 3,,');
  });

  it("returns a 429 that the SDK retries after Retry-After, then succeeds", async () => {
    llm.script("rate-limited", [
      httpError(429, { headers: { "retry-after-ms": "10" } }),
      httpError(500),
      textReply("finally"),
    ]);
    const res = await client("rate-limited").chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    expect(res.choices[0].message.content).toBe("finally");
    expect(llm.requests("rate-limited")).toHaveLength(3);
  });

  it("surfaces a non-retried error status with its body to the SDK", async () => {
    llm.script("bad-request", [
      httpError(400, { body: { error: { message: "context too long", type: "invalid_request_error" } } }),
    ]);
    const call = client("bad-request").chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    await expect(call).rejects.toMatchObject({ status: 400, message: expect.stringContaining("context too long") });
    expect(llm.requests("bad-request")).toHaveLength(1);
  });

  it("answers from a function of the request, selected by path prefix", async () => {
    llm.script("by-path", [
      (req) => {
        const index = /\[(\d+)\]<button>Add to cart/.exec(promptText(req))?.[1];
        return toolCallReply("click", { index: Number(index) });
      },
    ]);
    const res = await client("some-other-key", llm.urlFor("by-path")).chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "[1]<a>Home</a>\n[42]<button>Add to cart</button>" }],
    });
    const call = res.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({ index: 42 });
    expect(llm.requests("by-path")[0].path).toBe("/s/by-path/v1/chat/completions");
  });

  it("selects by model when the API key is not a scenario, and delays a slow answer", async () => {
    llm.script("slow-model", [textReply("late", { delayMs: 200 })]);
    const res = await client("unrelated").chat.completions.create({
      model: "slow-model",
      messages: [{ role: "user", content: "x" }],
    });
    expect(res.choices[0].message.content).toBe("late");
  });

  it("aborts a slow answer when the client times out", async () => {
    llm.script("too-slow", [textReply("never seen", { delayMs: 5_000 })]);
    const openai = new OpenAI({ apiKey: "too-slow", baseURL: llm.url, maxRetries: 0, timeout: 100 });
    await expect(
      openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    expect(llm.requests("too-slow")).toHaveLength(1);
  });

  it("streams text and tool calls as SSE chunks with usage", async () => {
    llm.script("stream", [toolCallReply("click", { index: 5 }, { content: "clicking now" })]);
    const stream = await client("stream").chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let args = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe("clicking now");
    expect(JSON.parse(args)).toEqual({ index: 5 });
    expect(usage?.total_tokens).toBe(110);
  });

  it("says clearly when a script is exhausted or missing, without SDK retries", async () => {
    llm.script("short", [textReply("only one")]);
    const openai = client("short");
    await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
    await expect(
      openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('script "short" is exhausted'),
    });
    expect(llm.requests("short")).toHaveLength(2);
    await expect(
      client("nobody").chat.completions.create({ model: "nothing", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("no script matches") });
  });

  it("lists models and records every request for secret checks", async () => {
    const models = await client("tools").models.list();
    expect(models.data.map((m) => m.id)).toEqual(["tools"]);
    const everything = llm
      .allRequests()
      .map((r) => r.rawBody)
      .join("\n");
    expect(everything).toContain("click the button");
    expect(everything).not.toContain("hunter2");
  });
  it("a step function that throws is a 500 the SDK does not retry, so the next step is not consumed", async () => {
    llm.script("throws", [
      () => {
        throw new Error("bad script");
      },
      textReply("second step"),
    ]);
    await expect(
      client("throws").chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toMatchObject({ status: 500 });
    expect(llm.requests("throws")).toHaveLength(1);
    expect(llm.remaining("throws")).toBe(1);
  });
});
