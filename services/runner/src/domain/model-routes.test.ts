import { callParams, createRouteTable } from "./model-routes";

const canonical = (m: string) => ({ "svc-latest": "svc-max" })[m] ?? m;

test("every model value resolves: its own override, its tier's, '*', then the default route", () => {
  const table = createRouteTable({
    baseUrl: "http://llm.test/v1",
    apiKey: "service-key",
    overrides: {
      "svc-max": { model: "big-model", vision: true },
      "claude-sonnet-4": { baseUrl: "http://anthropic-gw.test/v1", apiKey: "k2", provider: "anthropic" },
      "*": { toolChoice: "auto" },
    },
    canonical,
  });
  expect(table.resolve("svc-latest")).toEqual({
    baseUrl: "http://llm.test/v1",
    model: "big-model",
    apiKey: "service-key",
    provider: "default",
    vision: true,
    reasoning: false,
    toolChoice: "auto",
  });
  expect(table.resolve("claude-sonnet-4")).toMatchObject({
    baseUrl: "http://anthropic-gw.test/v1",
    model: "claude-sonnet-4",
    apiKey: "k2",
    provider: "anthropic",
  });
  expect(table.resolve("svc-mini").model).toBe("gpt-4.1-mini");
  expect(table.resolve("o3")).toMatchObject({ model: "o3", reasoning: true });
});

test("LLM_MODEL serves every model value from one provider model", () => {
  const table = createRouteTable({
    baseUrl: "http://ollama:11434/v1",
    defaultModel: "llama3.1",
    overrides: {},
    canonical,
  });
  expect(table.resolve("svc-ultra")).toMatchObject({ model: "llama3.1", provider: "default" });
  expect(table.resolve("svc-ultra").apiKey).toBeUndefined();
});

test("a reasoning route takes a thinking level (as reasoning_effort), any other route the sampling parameters", () => {
  const table = createRouteTable({ baseUrl: "http://x/v1", overrides: {}, canonical });
  const asked = { thinkingLevel: "high", temperature: 0.2, topP: 0.8, maxOutputTokens: 600 };
  expect(callParams(table.resolve("o4-mini"), asked)).toEqual({ reasoningEffort: "high", maxOutputTokens: 600 });
  expect(callParams(table.resolve("o4-mini"), { thinkingLevel: "disabled" })).toEqual({ reasoningEffort: "minimal" });
  expect(callParams(table.resolve("o4-mini"), {})).toEqual({});
  expect(callParams(table.resolve("gpt-4o"), asked)).toEqual({ temperature: 0.2, topP: 0.8, maxOutputTokens: 600 });
});

test("without LLM_BASE_URL only models with an endpoint in MODEL_ROUTES are served; the others say how to fix it", () => {
  const table = createRouteTable({
    overrides: { "claude-sonnet-4": { baseUrl: "http://anthropic-proxy/v1", provider: "anthropic" } },
    canonical,
  });
  expect(table.serves("claude-sonnet-4")).toBe(true);
  expect(table.resolve("claude-sonnet-4").baseUrl).toBe("http://anthropic-proxy/v1");
  expect(table.serves("svc-max")).toBe(false);
  expect(() => table.resolve("svc-max")).toThrow(
    /no model endpoint is configured for model 'svc-max': set LLM_BASE_URL/,
  );
  // Where an own key would be stored is known without an endpoint.
  expect(table.providerOf("claude-sonnet-4")).toBe("anthropic");
  expect(table.providerOf("svc-max")).toBe("default");
});
