import { clip } from "./clip";
import type { Action } from "./actions";

/** What the model saw of an element, for human-readable summaries. */
export interface ElementDescription {
  tag: string;
  label: string;
}

export type DescribeElement = (index: number) => ElementDescription | undefined;

function hostOf(url: string): string {
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `https://${url}`);
    return u.host + (u.pathname !== "/" ? u.pathname : "");
  } catch {
    return url;
  }
}

function element(index: number, describe: DescribeElement): string {
  const el = describe(index);
  if (!el) return `element ${index}`;
  return el.label ? `'${clip(el.label, 40)}'` : `the ${el.tag} [${index}]`;
}

/** One line a person understands: "Clicking 'Add to cart'". */
export function summarizeAction(action: Action, describe: DescribeElement): string {
  switch (action.name) {
    case "go_to_url":
      return `Navigating to ${clip(hostOf(action.url), 80)}`;
    case "click":
      return `Clicking ${element(action.index, describe)}`;
    case "input_text":
      return `Typing '${clip(action.text, 40)}' into ${element(action.index, describe)}`;
    case "select_option":
      return `Selecting '${clip(action.option, 40)}' in ${element(action.index, describe)}`;
    case "send_keys":
      return `Pressing ${action.keys}`;
    case "scroll":
      return `Scrolling ${action.direction}${action.index ? ` in ${element(action.index, describe)}` : ""}`;
    case "go_back":
      return "Going back";
    case "open_tab":
      return `Opening ${clip(hostOf(action.url), 80)} in a new tab`;
    case "switch_tab":
      return `Switching to tab ${action.tabId}`;
    case "close_tab":
      return `Closing tab ${action.tabId}`;
    case "extract":
      return `Reading the page: ${clip(action.question, 80)}`;
    case "wait":
      return `Waiting ${action.seconds} s`;
    case "list_files":
      return action.prefix ? `Listing workspace files under ${clip(action.prefix, 60)}` : "Listing workspace files";
    case "read_file":
      return `Reading ${clip(action.path, 80)}`;
    case "write_file":
      return `${action.append ? "Appending to" : "Writing"} ${clip(action.path, 80)}`;
    case "upload_file":
      return `Uploading ${clip(action.path, 60)} into ${element(action.index, describe)}`;
    case "list_emails":
      return "Checking the mailbox";
    case "read_email":
      return "Reading an email";
    case "wait_for_email":
      return "Waiting for an email";
    case "done":
      return action.success ? "Task completed" : "Task ended without success";
  }
}

/** A step's summary from its actions' summaries. */
export function summarizeStep(parts: string[]): string {
  if (parts.length === 0) return "Thinking";
  return clip(parts.join(", then "), 200);
}
