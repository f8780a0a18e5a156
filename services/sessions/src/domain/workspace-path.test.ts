import { InvalidArgumentError } from "@bas/errors";
import { normalizeFilePath, normalizeFolder } from "./workspace-path";

describe("workspace paths", () => {
  it.each([
    ["data.csv", "data.csv"],
    ["reports//2026/./q1.csv", "reports/2026/q1.csv"],
    ["./a.txt", "a.txt"],
    ["café.txt", "café.txt"],
    ["cafe\u0301.txt", "café.txt"],
  ])("%j is stored as %j", (raw, path) => {
    expect(normalizeFilePath(raw)).toBe(path);
  });

  it.each([
    ["../secrets.txt", '".."'],
    ["a/../../b", '".."'],
    ["/etc/passwd", "absolute"],
    ["..\\windows\\x", "backslash"],
    ["a\u0000b", "control"],
    ["line\nbreak.txt", "control"],
    ["folder/", "folder"],
    ["", "empty"],
    ["./", "folder"],
    [`${"x".repeat(256)}.txt`, "longer than 255"],
  ])("%j is refused (%s)", (raw) => {
    expect(() => normalizeFilePath(raw, ["body", "path"])).toThrow(InvalidArgumentError);
    try {
      normalizeFilePath(raw, ["body", "path"]);
    } catch (err) {
      expect((err as InvalidArgumentError).field).toEqual(["body", "path"]);
    }
  });

  it("folders end in a slash, the root is empty", () => {
    expect(normalizeFolder("")).toBe("");
    expect(normalizeFolder("./uploads")).toBe("uploads/");
    expect(normalizeFolder("a//b/")).toBe("a/b/");
    expect(() => normalizeFolder("../up")).toThrow(InvalidArgumentError);
  });
});
