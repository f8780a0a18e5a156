/** One tool call the scripted model makes. `arguments` as an object is JSON-encoded; a string is sent verbatim. */
export interface ScriptedToolCall {
  /** Defaults to `call_<n>`, unique within the server. */
  id?: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

export interface ScriptedUsage {
  promptTokens: number;
  completionTokens: number;
}

/** A normal chat-completion answer. */
export interface ScriptedReply {
  content?: string | null;
  toolCalls?: ScriptedToolCall[];
  /** Defaults to {@link DEFAULT_USAGE}. */
  usage?: ScriptedUsage;
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: "stop" | "tool_calls" | "length" | "content_filter";
  /** Wait this long before answering (a slow model). */
  delayMs?: number;
}

/** An HTTP error answer, e.g. `{ httpError: { status: 429, headers: { "retry-after-ms": "10" } } }`. */
export interface ScriptedHttpError {
  httpError: {
    status: number;
    /** JSON-encoded unless a string. Defaults to an OpenAI-shaped `{ error: { message, type, code } }`. */
    body?: unknown;
    headers?: Record<string, string>;
  };
  delayMs?: number;
}

export type ScriptedAnswer = ScriptedReply | ScriptedHttpError;

/** A step is a fixed answer or a function of the request it answers (e.g. read the page the agent sent). */
export type ScriptStep = ScriptedAnswer | ((request: RecordedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>);

/** One request the server received, kept for assertions. */
export interface RecordedRequest {
  /** The scenario key it was matched to, or `null` when none matched. */
  key: string | null;
  method: string;
  /** Path as received, including any `/s/<key>` prefix. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (`undefined` for GET or unparsable bodies). */
  body: any;
  rawBody: string;
  /** Index of the script step that answered it (0-based), or `null` when no step did. */
  stepIndex: number | null;
}

export const DEFAULT_USAGE: ScriptedUsage = { promptTokens: 100, completionTokens: 10 };
