import { clip } from "./clip";
/** What happened in one step, as the model is reminded of it later. */
export interface StepRecord {
  step: number;
  /** The model's own words alongside its tool calls (its plan), if any. */
  thought?: string;
  actions: ActionOutcome[];
  /** Where the browser was after the step. */
  url?: string;
}

export interface ActionOutcome {
  /** The call as the model made it, compact: `click {"index":3}`. */
  call: string;
  summary: string;
  result: string;
  error: boolean;
  /** Extracted content: kept in full longer than other results, it is the agent's memory. */
  memory?: boolean;
}

export interface HistoryOptions {
  /** Steps shown with their full results; older ones shrink to one line. */
  recentSteps: number;
  maxChars: number;
}

/** How much of a memory result (extracted content, a file read) the history keeps for recent steps. */
export const MEMORY_RESULT_CHARS = 4_000;

export const DEFAULT_HISTORY_OPTIONS: HistoryOptions = { recentSteps: 6, maxChars: 16_000 };

function fullStep(r: StepRecord): string {
  const lines = [`Step ${r.step}:`];
  if (r.thought) lines.push(`  Thought: ${clip(r.thought, 600)}`);
  for (const a of r.actions) {
    lines.push(`  Action: ${clip(a.call, 400)}`);
    lines.push(`  ${a.error ? "Error" : "Result"}: ${clip(a.result, a.memory ? MEMORY_RESULT_CHARS : 1_500)}`);
  }
  if (r.url) lines.push(`  Page after the step: ${clip(r.url, 200)}`);
  return lines.join("\n");
}

function shortStep(r: StepRecord): string {
  const parts = r.actions.map((a) => `${a.summary}${a.error ? ` (error: ${clip(a.result, 120)})` : ""}`);
  const memory = r.actions.filter((a) => a.memory).map((a) => `\n  Extracted: ${clip(a.result, 1_500)}`);
  return `Step ${r.step}: ${parts.join("; ") || "no action"}${memory.join("")}`;
}

/**
 * The history of earlier steps for the next prompt: recent steps in full, older ones one line each, and when even
 * that is too long the oldest lines are dropped (extracted content is what survives longest).
 */
export function renderHistory(
  records: readonly StepRecord[],
  options: HistoryOptions = DEFAULT_HISTORY_OPTIONS,
): string {
  if (records.length === 0) return "No steps yet.";
  const cut = Math.max(0, records.length - options.recentSteps);
  const recent = records.slice(cut).map(fullStep);
  const older = records.slice(0, cut).map(shortStep);
  let used = recent.reduce((n, s) => n + s.length + 1, 0);
  const keptOlder: string[] = [];
  for (let i = older.length - 1; i >= 0; i--) {
    if (used + older[i].length + 1 > options.maxChars) {
      keptOlder.unshift(`[${i + 1} earlier step${i ? "s" : ""} omitted]`);
      break;
    }
    used += older[i].length + 1;
    keptOlder.unshift(older[i]);
  }
  return [...keptOlder, ...recent].join("\n");
}
