import { inSpan } from "@bas/service-kit/tracing";
import type { Action } from "../domain/actions";
import { isFileAction } from "../domain/file-actions";
import { isMailAction } from "../domain/mail-actions";
import type { ActionOutcome } from "../domain/history";
import { extractMessages } from "../domain/prompt";
import type { Redactor, SecretDomains } from "../domain/secrets";
import { secretKeysIn } from "../domain/secrets";
import type { BrowserDriver, TraceEntry } from "./browser-driver";
import { BrowserGoneError, isModelFacing, ToolError } from "./browser-errors";
import { BudgetExceededError, type MailboxTools, type ModelCaller, ModelError, type WorkspaceTools } from "./ports";

export interface RunActionDeps {
  browser: BrowserDriver;
  model: ModelCaller;
  redact: Redactor;
  signal: AbortSignal;
  /** Collects replayable actions (code mode). */
  trace?: TraceEntry[];
  secrets(): Promise<Record<string, string>>;
  secretDomains: SecretDomains;
  /** The browser's allowedDomains, to name why a navigation failed. */
  allowedDomains?: readonly string[];
  extractMaxChars: number;
  /** The task's workspace (file tools), when it has one. */
  workspace?: WorkspaceTools;
  /** The session's temporary mailbox (mail tools), when it has one. */
  mailbox?: MailboxTools;
}

type ActionResult = ActionOutcome & { pageChanged: boolean };

/**
 * Runs one non-final action and says what happened in words for the model. Failures the model can react to (bad
 * index, element gone, navigation error, a page that threw) come back as an error outcome instead of ending the task.
 * Each action is a `browser.action` span; one that failed for the model says so in `bas.action.error`.
 */
export function runAction(
  action: Exclude<Action, { name: "done" }>,
  call: string,
  summary: string,
  deps: RunActionDeps,
): Promise<ActionResult> {
  return inSpan("browser.action", { attributes: { "bas.action": action.name } }, async (span) => {
    const outcome = await act(action, call, summary, deps);
    span.setAttributes({ "bas.action.error": outcome.error });
    return outcome;
  });
}

async function act(
  action: Exclude<Action, { name: "done" }>,
  call: string,
  summary: string,
  deps: RunActionDeps,
): Promise<ActionResult> {
  const { browser, redact } = deps;
  try {
    if (action.name === "extract") {
      const page = await browser.pageContent(deps.extractMaxChars);
      const reply = await deps.model.call({
        messages: extractMessages(action.question, page.url, redact(page.text)),
        signal: deps.signal,
      });
      const answer = redact(reply.content?.trim() || "(the model gave no answer)");
      return { call, summary, result: answer, error: false, memory: true, pageChanged: false };
    }
    if (isFileAction(action) || isMailAction(action)) {
      const result = isFileAction(action)
        ? await required(deps.workspace, "workspace").run(action, browser, deps.signal)
        : await required(deps.mailbox, "mailbox").run(action, deps.signal);
      // What the agent read (a file, a mail's code or link) is needed steps later: kept in the history like an
      // extract's answer.
      const memory = action.name === "read_file" || action.name === "read_email" || action.name === "wait_for_email";
      return { call, summary, result: redact(result), error: false, ...(memory ? { memory } : {}), pageChanged: false };
    }
    const needsSecrets = action.name === "input_text" && secretKeysIn(action.text).length > 0;
    const result = await browser.act(action, {
      secrets: needsSecrets ? await deps.secrets() : {},
      secretDomains: deps.secretDomains,
      ...(deps.allowedDomains?.length ? { allowedDomains: deps.allowedDomains } : {}),
      trace: !!deps.trace,
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    if (result.trace) deps.trace?.push(result.trace);
    return { call, summary, result: redact(result.result), error: false, pageChanged: result.pageChanged };
  } catch (err) {
    if (deps.signal.aborted || err instanceof ModelError || err instanceof BudgetExceededError) throw err;
    if (!isModelFacing(err) && !browser.isConnected())
      throw new BrowserGoneError("the browser went away", { cause: err });
    // Anything else the page or CDP threw (a detached node, a navigation timeout) is the model's to work around.
    const message = redact((err as Error).message.split("\n")[0]);
    return {
      call,
      summary,
      result: isModelFacing(err) ? message : `The action failed: ${message}`,
      error: true,
      pageChanged: false,
    };
  }
}

function required<T>(port: T | undefined, what: string): T {
  if (!port) throw new ToolError(`This task has no ${what}.`);
  return port;
}
