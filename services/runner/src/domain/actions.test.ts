import { parseToolCall, toolDefinitions } from "./actions";

describe("parseToolCall", () => {
  test("a valid call becomes an action with defaults filled in", () => {
    expect(parseToolCall("input_text", '{"index": 4, "text": "shoes"}', {})).toEqual({
      ok: true,
      action: { name: "input_text", index: 4, text: "shoes", clear: true },
    });
    expect(parseToolCall("scroll", '{"direction":"down"}', {})).toEqual({
      ok: true,
      action: { name: "scroll", direction: "down", pages: 1 },
    });
    expect(parseToolCall("switch_tab", '{"tab_id":2}', {})).toEqual({
      ok: true,
      action: { name: "switch_tab", tabId: 2 },
    });
    expect(parseToolCall("go_back", "", {})).toEqual({ ok: true, action: { name: "go_back" } });
  });

  test("an unknown tool, invalid JSON and wrong argument types get messages the model can act on", () => {
    expect(parseToolCall("fly", "{}", {})).toEqual({
      ok: false,
      error: expect.stringContaining('Unknown action "fly"'),
    });
    expect(parseToolCall("click", '{"index": 3,,', {})).toEqual({
      ok: false,
      error: expect.stringMatching(/^The arguments of click are not valid JSON/),
    });
    expect(parseToolCall("click", "[1]", {})).toEqual({
      ok: false,
      error: "The arguments of click must be a JSON object.",
    });
    expect(parseToolCall("click", '{"index": "three"}', {})).toEqual({
      ok: false,
      error: expect.stringContaining("index: Invalid input: expected number"),
    });
    expect(parseToolCall("click", '{"index": 0}', {})).toEqual({ ok: false, error: expect.stringContaining("index") });
  });

  test("done: free text by default, data required with an output schema, code allowed in code mode", () => {
    expect(parseToolCall("done", '{"success":true,"text":"$5"}', {})).toEqual({
      ok: true,
      action: { name: "done", success: true, text: "$5" },
    });
    const schema = { type: "object" };
    expect(parseToolCall("done", '{"success":true}', { outputSchema: schema })).toEqual({
      ok: false,
      error: expect.stringContaining("`data`"),
    });
    expect(parseToolCall("done", '{"success":true,"data":{"a":1}}', { outputSchema: schema })).toEqual({
      ok: true,
      action: { name: "done", success: true, text: "", data: { a: 1 } },
    });
    expect(parseToolCall("done", '{"success":"yes","text":"x"}', {})).toEqual({
      ok: false,
      error: expect.stringContaining("success"),
    });
  });
});

describe("toolDefinitions", () => {
  test("every action is offered, and done's parameters follow the output mode", () => {
    const names = toolDefinitions({}).map((t) => t.function.name);
    expect(names).toEqual([
      "go_to_url",
      "click",
      "input_text",
      "select_option",
      "send_keys",
      "scroll",
      "go_back",
      "open_tab",
      "switch_tab",
      "close_tab",
      "extract",
      "wait",
      "done",
    ]);
    const schema = { type: "object", properties: { price: { type: "number" } }, required: ["price"] };
    const done = toolDefinitions({ outputSchema: schema }).at(-1)!.function.parameters as any;
    expect(done.properties.data).toMatchObject(schema);
    expect(done.required).toEqual(["success", "data"]);
    const code = toolDefinitions({ codeMode: true }).at(-1)!.function.parameters as any;
    expect(Object.keys(code.properties)).toEqual(["success", "text", "code"]);
  });
});
