import type { BrowserDriver, InputFile } from "./browser-driver";
import { ToolError } from "./browser-errors";
import { createWorkspaceTools, type WorkspaceFiles } from "./workspace-tools";

/** The tools' own logic over a workspace held in a Map (the real one is tested end to end in test/e2e). */
function workspace(initial: Record<string, string | Uint8Array> = {}) {
  const files = new Map<string, { data: Uint8Array; contentType: string }>();
  for (const [path, content] of Object.entries(initial)) {
    const data = typeof content === "string" ? new TextEncoder().encode(content) : content;
    files.set(path, { data, contentType: typeof content === "string" ? "text/plain" : "application/pdf" });
  }
  const port: WorkspaceFiles = {
    async list(prefix, limit) {
      const found = [...files.keys()].filter((p) => p.startsWith(prefix)).sort();
      return {
        files: found.slice(0, limit).map((path) => ({ path, size: files.get(path)!.data.length })),
        more: found.length > limit,
      };
    },
    async read(path) {
      return files.get(path) ?? null;
    },
    async write(path, data, contentType) {
      files.set(path, { data, contentType });
      return path;
    },
  };
  return { files, port };
}

const picked: InputFile[] = [];
const browser = {
  async setInputFile(index: number, file: InputFile) {
    picked.push(file);
    return `Put ${file.name} into ${index}`;
  },
} as unknown as BrowserDriver;
const signal = new AbortController().signal;

describe("workspace tools", () => {
  it("list files with their sizes, or say there are none", async () => {
    const tools = createWorkspaceTools(workspace({ "a.txt": "abc", "r/b.txt": "hello" }).port);
    expect(await tools.run({ name: "list_files" }, browser, signal)).toBe("a.txt (3 bytes)\nr/b.txt (5 bytes)");
    expect(await tools.run({ name: "list_files", prefix: "x/" }, browser, signal)).toBe("No files under x/.");
  });

  it("read a long file a part at a time, and tell the model how to read on", async () => {
    const text = "0123456789".repeat(5);
    const tools = createWorkspaceTools(workspace({ "long.txt": text }).port, {
      readChars: 20,
      writeBytes: 100,
      uploadBytes: 100,
    });
    expect(await tools.run({ name: "read_file", path: "long.txt" }, browser, signal)).toBe(
      `[characters 0-20 of 50; read_file with offset 20 reads on (30 characters left)]\n${text.slice(0, 20)}`,
    );
    expect(await tools.run({ name: "read_file", path: "long.txt", offset: 40 }, browser, signal)).toBe(
      `[characters 40-50 of 50; the end]\n${text.slice(40)}`,
    );
  });

  it("do not show a binary file as text, and refuse a missing one with a hint", async () => {
    const tools = createWorkspaceTools(workspace({ "doc.pdf": new Uint8Array([37, 80, 0, 1]) }).port);
    expect(await tools.run({ name: "read_file", path: "doc.pdf" }, browser, signal)).toMatch(
      /^doc\.pdf is a binary file \(application\/pdf, 4 bytes\)/,
    );
    await expect(tools.run({ name: "read_file", path: "nope.txt" }, browser, signal)).rejects.toThrow(
      new ToolError("There is no file nope.txt in the workspace. Use list_files to see what is there."),
    );
  });

  it("write and append text with a type from the name, within the size limit", async () => {
    const ws = workspace();
    const tools = createWorkspaceTools(ws.port, { readChars: 100, writeBytes: 10, uploadBytes: 100 });
    expect(await tools.run({ name: "write_file", path: "out.csv", content: "a,b\n" }, browser, signal)).toBe(
      "Wrote out.csv (4 bytes).",
    );
    expect(ws.files.get("out.csv")?.contentType).toBe("text/csv; charset=utf-8");
    await tools.run({ name: "write_file", path: "out.csv", content: "1,2\n", append: true }, browser, signal);
    expect(new TextDecoder().decode(ws.files.get("out.csv")?.data)).toBe("a,b\n1,2\n");
    await expect(
      tools.run({ name: "write_file", path: "out.csv", content: "3,4\n", append: true }, browser, signal),
    ).rejects.toThrow("The file would be 12 bytes; write_file writes at most 10.");
  });

  it("put a file into a page's file input by its name and bare media type", async () => {
    const ws = workspace({ "in/cv.pdf": new Uint8Array([1, 2, 3]) });
    ws.files.set("in/cv.pdf", { data: new Uint8Array([1, 2, 3]), contentType: "application/pdf; x=y" });
    const tools = createWorkspaceTools(ws.port);
    expect(await tools.run({ name: "upload_file", index: 4, path: "in/cv.pdf" }, browser, signal)).toBe(
      "Put cv.pdf into 4",
    );
    expect(picked.at(-1)).toEqual({ name: "cv.pdf", contentType: "application/pdf", data: new Uint8Array([1, 2, 3]) });
  });
});
