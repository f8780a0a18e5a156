import {
  indexOf,
  promptText,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedUsage,
  toolCallReply,
} from "../../../../test/support/scripted-llm";

/** The [index] of the counter's Press button in the page the agent showed the model. */
export const pressIndex = (req: RecordedRequest) => indexOf(req, /<button>Press/);

/** Presses the counter's button. */
export const press =
  (usage?: ScriptedUsage) =>
  (req: RecordedRequest): ScriptedReply =>
    toolCallReply("click", { index: pressIndex(req) }, usage ? { usage } : {});

/**
 * The scripted model as a real one would act: it presses the button, unless the history of its earlier steps says
 * it already did (then it is done). An agent that forgot its steps presses a second time.
 */
export const pressUnlessDone =
  (usage?: ScriptedUsage) =>
  (req: RecordedRequest): ScriptedReply => {
    const history = /<history>([\s\S]*?)<\/history>/.exec(promptText(req))?.[1] ?? "";
    return /click/.test(history)
      ? toolCallReply("done", { success: true, text: "Pressed the button once." }, usage ? { usage } : {})
      : toolCallReply("click", { index: pressIndex(req) }, usage ? { usage } : {});
  };
