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
 * The scripted model as a real one would act: it presses the button, unless it already did. What the page shows
 * decides: "Pressed 1 time" means done, "Pressed 0 times" means not yet, even where its history holds a click whose
 * outcome was unknown (the connection to the browser broke as it was sent). Where the page shows no count (a new
 * browser, a page still loading), the history decides: a click there means done. An agent that forgot its steps,
 * or repeated an action on its own, leaves a count of 2.
 */
export const pressUnlessDone =
  (usage?: ScriptedUsage) =>
  (req: RecordedRequest): ScriptedReply => {
    const text = promptText(req);
    const page = /<browser_state>([\s\S]*?)<\/browser_state>/.exec(text)?.[1] ?? "";
    const count = /Pressed (\d+) time/.exec(page)?.[1];
    const history = /<history>([\s\S]*?)<\/history>/.exec(text)?.[1] ?? "";
    const pressed = count === undefined ? /click/.test(history) : Number(count) > 0;
    return pressed
      ? toolCallReply("done", { success: true, text: "Pressed the button once." }, usage ? { usage } : {})
      : toolCallReply("click", { index: pressIndex(req) }, usage ? { usage } : {});
  };
