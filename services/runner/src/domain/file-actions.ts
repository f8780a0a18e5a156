import { z } from "zod";

/** Tools of a task with a workspace: its files, confined to it (paths are relative to the workspace's root). */
const path = z.string().min(1).max(512).describe('A path relative to the workspace root, e.g. "reports/result.csv"');

export const fileActionSchemas = {
  list_files: z
    .object({ prefix: z.string().max(512).optional().describe('Only paths starting with this, e.g. "uploads/"') })
    .describe("List the files of the workspace (persistent storage shared with the user)."),
  read_file: z
    .object({
      path,
      offset: z.number().int().min(0).optional().describe("Start at this character (to read on in a long file)"),
    })
    .describe("Read a text file of the workspace (a long one a part at a time)."),
  write_file: z
    .object({
      path,
      content: z.string().describe("The whole text content"),
      append: z.boolean().optional().describe("Add to the end of the file instead of replacing it"),
    })
    .describe("Write a text file into the workspace; the user gets it when the task is done."),
  upload_file: z
    .object({
      index: z.number().int().min(1).describe("The [index] of a file input (<input type=file>) in the page"),
      path,
    })
    .describe("Put a workspace file into a file input of the page, as if the user picked it."),
} as const;

export type FileAction =
  | { name: "list_files"; prefix?: string }
  | { name: "read_file"; path: string; offset?: number }
  | { name: "write_file"; path: string; content: string; append?: boolean }
  | { name: "upload_file"; index: number; path: string };

const FILE_ACTIONS = new Set<string>(Object.keys(fileActionSchemas));

export function isFileAction(action: { name: string }): action is FileAction {
  return FILE_ACTIONS.has(action.name);
}
