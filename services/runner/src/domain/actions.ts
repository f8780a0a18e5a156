import { z } from "zod";
import { type FileAction, fileActionSchemas } from "./file-actions";
import { type MailAction, mailActionSchemas } from "./mail-actions";

/** What the model can do in one step. One tool per action; `done` ends the task. */
const index = z.number().int().min(1).describe("The [index] of an element in the current page content");

export const actionSchemas = {
  go_to_url: z
    .object({ url: z.string().min(1).describe("Absolute URL (https://...) or a host name") })
    .describe("Navigate the current tab to a URL."),
  click: z.object({ index }).describe("Click the element with this index."),
  input_text: z
    .object({
      index,
      text: z.string().describe("Text to type. Use <secret>key</secret> to type a secret value by its key."),
      clear: z.boolean().optional().describe("Clear the field first (default true)"),
    })
    .describe("Type text into an input, textarea or editable element."),
  select_option: z
    .object({ index, option: z.string().describe("The visible text (or value) of the option") })
    .describe("Choose an option of a <select> element."),
  send_keys: z
    .object({ keys: z.string().min(1).describe('Keys such as "Enter", "Escape", "Tab", "Control+a", "ArrowDown"') })
    .describe("Press keys on the focused element."),
  scroll: z
    .object({
      direction: z.enum(["down", "up"]),
      pages: z.number().positive().max(20).optional().describe("How many viewport heights (default 1)"),
      index: index.optional().describe("Scroll inside this element instead of the page"),
    })
    .describe("Scroll the page (or a scrollable element) to see more content."),
  go_back: z.object({}).describe("Go back to the previous page in the current tab."),
  open_tab: z.object({ url: z.string().min(1) }).describe("Open a URL in a new tab and switch to it."),
  switch_tab: z.object({ tab_id: z.number().int().min(1) }).describe("Switch to the open tab with this id."),
  close_tab: z.object({ tab_id: z.number().int().min(1) }).describe("Close the open tab with this id."),
  extract: z
    .object({ question: z.string().min(1).describe("What to find out from the whole page content") })
    .describe("Answer a question from the current page's full content (beyond what fits in the page view)."),
  wait: z
    .object({ seconds: z.number().min(0).max(30).optional().describe("Default 2, at most 30") })
    .describe("Wait for the page to load or change."),
} as const;

export type ActionName = keyof typeof actionSchemas | "done";

export type Action =
  | { name: "go_to_url"; url: string }
  | { name: "click"; index: number }
  | { name: "input_text"; index: number; text: string; clear: boolean }
  | { name: "select_option"; index: number; option: string }
  | { name: "send_keys"; keys: string }
  | { name: "scroll"; direction: "down" | "up"; pages: number; index?: number }
  | { name: "go_back" }
  | { name: "open_tab"; url: string }
  | { name: "switch_tab"; tabId: number }
  | { name: "close_tab"; tabId: number }
  | { name: "extract"; question: string }
  | { name: "wait"; seconds: number }
  | FileAction
  | MailAction
  | DoneAction;

export interface DoneAction {
  name: "done";
  success: boolean;
  /** Free-text answer (always present; with an output schema a short summary). */
  text: string;
  /** The structured answer when the task has an output schema. */
  data?: unknown;
  /** Code mode: a script the model wrote itself, when it did. */
  code?: string;
}

/** An action the browser runs (the file and mail tools are run by their own ports). */
export type BrowserAction = Exclude<Action, DoneAction | FileAction | MailAction>;

export type ActionOf<N extends Action["name"]> = Extract<Action, { name: N }>;

/** What the task has besides its browser; each adds its own tools. */
export interface ToolAccess {
  /** A workspace is attached: file tools. */
  workspace?: boolean;
  /** The session has a temporary mailbox: mail tools. */
  mailbox?: boolean;
}

/** The non-final tools of a task with this access, by name. */
function schemasFor(access: ToolAccess): Record<string, z.ZodType> {
  return {
    ...actionSchemas,
    ...(access.workspace ? fileActionSchemas : {}),
    ...(access.mailbox ? mailActionSchemas : {}),
  };
}

/** How the task wants its final answer; decides the shape of the `done` tool. */
export interface OutputMode {
  outputSchema?: Record<string, unknown>;
  codeMode?: boolean;
}

export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  delete json.$schema;
  return JSON.parse(JSON.stringify(json, (_k, v) => (v === Number.MAX_SAFE_INTEGER ? undefined : v)));
}

function doneParameters(mode: OutputMode): Record<string, unknown> {
  const success = { type: "boolean", description: "true if the task was fully achieved, false otherwise" };
  if (mode.outputSchema) {
    return {
      type: "object",
      properties: {
        success,
        data: { ...mode.outputSchema, description: "The answer, exactly in the required structure" },
        text: { type: "string", description: "One sentence summarizing the result" },
      },
      required: ["success", "data"],
    };
  }
  const properties: Record<string, unknown> = {
    success,
    text: { type: "string", description: "The final answer or result for the user" },
  };
  if (mode.codeMode) {
    properties.code = {
      type: "string",
      description:
        "Optional: a standalone Node.js script using puppeteer-core that repeats the task and prints its result. " +
        "Leave it out to have one generated from your actions.",
    };
  }
  return { type: "object", properties, required: ["success", "text"] };
}

/** The tools offered to the model for the task's output mode. */
export function toolDefinitions(mode: OutputMode, access: ToolAccess = {}): ToolDefinition[] {
  const tools: ToolDefinition[] = Object.entries(schemasFor(access)).map(([name, schema]) => ({
    type: "function",
    function: { name, description: schema.description ?? name, parameters: jsonSchemaOf(schema) },
  }));
  tools.push({
    type: "function",
    function: {
      name: "done",
      description: "Finish the task and give the final result. Call it alone, when the task is complete or impossible.",
      parameters: doneParameters(mode),
    },
  });
  return tools;
}

export type ParsedToolCall = { ok: true; action: Action } | { ok: false; error: string };

const doneSchema = z.object({
  success: z.boolean(),
  text: z.string().optional(),
  data: z.unknown().optional(),
  code: z.string().optional(),
});

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "arguments"}: ${i.message}`).join("; ");
}

/** Turns one tool call of the model into an action, or an error message the model can act on. */
export function parseToolCall(
  name: string,
  rawArguments: string,
  mode: OutputMode,
  access: ToolAccess = {},
): ParsedToolCall {
  const schemas = schemasFor(access);
  const known = name === "done" || Object.hasOwn(schemas, name);
  if (!known) {
    return {
      ok: false,
      error: `Unknown action "${name}". Use one of: ${[...Object.keys(schemas), "done"].join(", ")}.`,
    };
  }
  let args: unknown;
  try {
    args = rawArguments.trim() === "" ? {} : JSON.parse(rawArguments);
  } catch (err) {
    return {
      ok: false,
      error: `The arguments of ${name} are not valid JSON (${(err as Error).message}). Send a JSON object.`,
    };
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { ok: false, error: `The arguments of ${name} must be a JSON object.` };
  }
  if (name === "done") {
    const parsed = doneSchema.safeParse(args);
    if (!parsed.success) return { ok: false, error: `Invalid arguments for done: ${describeIssues(parsed.error)}.` };
    const { success, text, data, code } = parsed.data;
    if (mode.outputSchema && data === undefined) {
      return { ok: false, error: "done needs `data`: the answer in the required structure." };
    }
    const finalText = text ?? "";
    return {
      ok: true,
      action: {
        name: "done",
        success,
        text: finalText,
        ...(data !== undefined ? { data } : {}),
        ...(code ? { code } : {}),
      },
    };
  }
  const parsed = schemas[name].safeParse(args);
  if (!parsed.success) return { ok: false, error: `Invalid arguments for ${name}: ${describeIssues(parsed.error)}.` };
  return { ok: true, action: normalize(name, parsed.data as Record<string, any>) };
}

/** The action of parsed arguments; tools whose arguments are the action's fields as they are need no case here. */
function normalize(name: string, a: Record<string, any>): Action {
  switch (name) {
    case "input_text":
      return { name, index: a.index, text: a.text, clear: a.clear ?? true };
    case "scroll":
      return { name, direction: a.direction, pages: a.pages ?? 1, ...(a.index ? { index: a.index } : {}) };
    case "switch_tab":
    case "close_tab":
      return { name, tabId: a.tab_id };
    case "wait":
      return { name, seconds: a.seconds ?? 2 };
    case "go_back":
      return { name };
    default:
      return { name, ...a } as Action;
  }
}
