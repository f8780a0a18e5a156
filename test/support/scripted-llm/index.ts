/** A scripted OpenAI-compatible model server for tests: the one stand-in allowed. See test/README.md. */
export { startScriptedLlm, type ScriptedLlm } from "./scripted-llm-server";
export {
  httpError,
  indexOf,
  lastInputText,
  offeredTools,
  promptText,
  textReply,
  toolCallReply,
  toolCallsReply,
} from "./steps";
export {
  DEFAULT_USAGE,
  type RecordedRequest,
  type ScriptedAnswer,
  type ScriptedHttpError,
  type ScriptedReply,
  type ScriptedToolCall,
  type ScriptedUsage,
  type ScriptStep,
} from "./types";
