import {
  decodeMemory,
  type FinishedStep,
  interruptedStep,
  type PendingStep,
  type StepMemory,
  type StepMessage,
} from "./step-memory";

/** Where the agent loop starts: the first step's number, what it remembers, what it must be told. */
export interface AgentStart {
  nextStep: number;
  /** Earlier steps of the task, oldest first. */
  memories: StepMemory[];
  /** For the model, with the next step. */
  notes: string[];
  /** For the session, shown with the next recorded step. */
  notices: StepMessage[];
}

export const FRESH_START: AgentStart = { nextStep: 1, memories: [], notes: [], notices: [] };

export interface ResumeInput {
  attempt: number;
  /** The task's progress as the sessions service has it. */
  lastStep: number;
  agentRecords: readonly string[];
  /** What the previous attempt was acting on when it stopped, if it said. */
  pending?: PendingStep;
  /** The browser this attempt got. */
  browserId: string;
}

export interface ResumePlan {
  start: AgentStart;
  /** A step the previous attempt was acting on but never reported: record it before going on. */
  interrupted?: FinishedStep;
}

/** The model is told when its browser is not the one its earlier steps ran in. */
export const NEW_BROWSER_NOTE =
  "Your browser was restarted after the steps above: the pages and tabs you had open are gone (cookies and logins that only lived in that browser too). Continue the task from here; redo only what is needed to get back to where you were.";

/** The message that tells the session's caller the task goes on in a new browser. */
export function newBrowserNotice(where = "the task continues"): StepMessage {
  return {
    role: "ai",
    type: "task_resumed",
    data: `The task's browser was lost: ${where} in a new browser. The pages and tabs of the earlier steps are gone.`,
    summary: "Continuing in a new browser",
    hidden: false,
  };
}

/**
 * How an attempt continues the task: from the step after the last one recorded, with the history of every recorded
 * step, never redoing one. A step the previous attempt was acting on when it died is recorded with an unknown
 * outcome. When this attempt's browser is not the one the last step ran in, the model and the session are told.
 */
export function planResume(input: ResumeInput): ResumePlan {
  const memories = input.agentRecords.map(decodeMemory).filter((m): m is StepMemory => !!m);
  const pending = input.pending && input.pending.step > input.lastStep ? input.pending : undefined;
  const interrupted = pending ? interruptedStep(pending) : undefined;
  if (interrupted) memories.push(interrupted.memory);
  const lastStep = interrupted ? interrupted.step : input.lastStep;
  if (lastStep === 0) return { start: FRESH_START };

  const lastBrowser = memories.at(-1)?.browserId;
  const sameBrowser = !lastBrowser || lastBrowser === input.browserId;
  const correction = memories.at(-1)?.correction;
  const where = `attempt ${input.attempt} continues the task from step ${lastStep + 1}`;
  const notice: StepMessage = sameBrowser
    ? {
        role: "ai",
        type: "task_resumed",
        data: `The runner was restarted: ${where} in the same browser.`,
        hidden: true,
      }
    : newBrowserNotice(where);
  return {
    start: {
      nextStep: lastStep + 1,
      memories,
      notes: [...(correction ? [correction] : []), ...(sameBrowser ? [] : [NEW_BROWSER_NOTE])],
      notices: [notice],
    },
    ...(interrupted ? { interrupted } : {}),
  };
}
