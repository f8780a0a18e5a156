import { lookup as mimeTypeOf } from "mime-types";
import type { FileAction } from "../domain/file-actions";
import { MEMORY_RESULT_CHARS } from "../domain/history";
import type { BrowserDriver } from "./browser-driver";
import { ToolError } from "./browser-errors";
import type { WorkspaceTools } from "./ports";

/** A task's workspace as its file tools see it; refusals come back as ToolErrors worded for the model. */
export interface WorkspaceFiles {
  /** Files by path, at most `limit`; `more`: there are others after them. */
  list(prefix: string, limit: number): Promise<{ files: { path: string; size: number }[]; more: boolean }>;
  /** The file's bytes, or null when there is no file at the path. */
  read(path: string): Promise<{ data: Uint8Array; contentType: string } | null>;
  /** Stores the file at the path (replacing one there); returns the path as stored (normalised). */
  write(path: string, data: Uint8Array, contentType: string): Promise<string>;
}

export interface WorkspaceToolLimits {
  /** Most characters of a file one `read_file` shows the model (what the history keeps of a memory result). */
  readChars: number;
  /** Largest file `write_file` writes (appended ones included). */
  writeBytes: number;
  /** Largest file `upload_file` puts into a page (its bytes travel over CDP). */
  uploadBytes: number;
}

export const DEFAULT_WORKSPACE_TOOL_LIMITS: WorkspaceToolLimits = {
  readChars: MEMORY_RESULT_CHARS - 200,
  writeBytes: 5 * 1024 * 1024,
  uploadBytes: 20 * 1024 * 1024,
};

const LISTED = 200;

/** Text, if the bytes are UTF-8 text (no NUL, no invalid sequence); else undefined. */
function textOf(data: Uint8Array): string | undefined {
  if (data.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    return undefined;
  }
}

const contentTypeFor = (path: string) => {
  const type = mimeTypeOf(path) || "text/plain";
  return type.startsWith("text/") ? `${type}; charset=utf-8` : type;
};

/** The file tools (list, read, write, upload into a page) over one workspace. */
export function createWorkspaceTools(
  files: WorkspaceFiles,
  limits: WorkspaceToolLimits = DEFAULT_WORKSPACE_TOOL_LIMITS,
): WorkspaceTools {
  async function existing(path: string) {
    const file = await files.read(path);
    if (!file) throw new ToolError(`There is no file ${path} in the workspace. Use list_files to see what is there.`);
    return file;
  }

  return {
    async run(action: FileAction, browser: BrowserDriver) {
      switch (action.name) {
        case "list_files": {
          const { files: found, more } = await files.list(action.prefix ?? "", LISTED);
          if (!found.length) return action.prefix ? `No files under ${action.prefix}.` : "The workspace has no files.";
          const lines = found.map((f) => `${f.path} (${f.size} bytes)`);
          if (more) lines.push(`(only the first ${LISTED}; give a prefix to see others)`);
          return lines.join("\n");
        }
        case "read_file": {
          const file = await existing(action.path);
          const text = textOf(file.data);
          if (text === undefined) {
            return (
              `${action.path} is a binary file (${file.contentType}, ${file.data.length} bytes): it cannot be shown ` +
              "as text, but upload_file can put it into a page's file input."
            );
          }
          const start = action.offset ?? 0;
          const end = start + limits.readChars;
          if (start === 0 && text.length <= end) return text;
          const part = text.slice(start, end);
          const rest = text.length - Math.min(end, text.length);
          const next = rest > 0 ? `; read_file with offset ${end} reads on (${rest} characters left)` : "; the end";
          return `[characters ${start}-${start + part.length} of ${text.length}${next}]\n${part}`;
        }
        case "write_file": {
          const before = action.append ? await files.read(action.path) : null;
          if (before && textOf(before.data) === undefined) {
            throw new ToolError(`${action.path} is a binary file; only text files can be appended to.`);
          }
          const added = new TextEncoder().encode(action.content);
          const data = before ? Buffer.concat([before.data, added]) : added;
          if (data.length > limits.writeBytes) {
            throw new ToolError(
              `The file would be ${data.length} bytes; write_file writes at most ${limits.writeBytes}.`,
            );
          }
          const stored = await files.write(action.path, data, before?.contentType ?? contentTypeFor(action.path));
          return `${before ? "Appended to" : "Wrote"} ${stored} (${data.length} bytes).`;
        }
        case "upload_file": {
          const file = await existing(action.path);
          if (file.data.length > limits.uploadBytes) {
            throw new ToolError(
              `${action.path} has ${file.data.length} bytes; upload_file takes files up to ${limits.uploadBytes}.`,
            );
          }
          const name = action.path.split("/").pop() ?? action.path;
          // A picked file's type is a bare media type, as browsers give it.
          const contentType = file.contentType.split(";")[0].trim();
          return browser.setInputFile(action.index, { name, contentType, data: file.data });
        }
      }
    },
  };
}
