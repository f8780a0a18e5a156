import { keptSourceUrl, MAX_FILE_NAME, safeFileName } from "./download";

test("a download is listed under a plain file name, whatever the page offered", () => {
  expect(safeFileName("report.csv")).toBe("report.csv");
  expect(safeFileName("../../etc/passwd")).toBe("passwd");
  expect(safeFileName("C:\\Users\\x\\evil.exe")).toBe("evil.exe");
  expect(safeFileName("..hidden")).toBe("hidden");
  expect(safeFileName("a\u0000b\nc.txt")).toBe("abc.txt");
  expect(safeFileName("")).toBe("download");
  expect(safeFileName("../")).toBe("download");
  expect(safeFileName(`${"ä".repeat(300)}.txt`)).toHaveLength(MAX_FILE_NAME);
});

test("a data: URL is kept by its scheme only, a long URL cut", () => {
  expect(keptSourceUrl(`data:text/plain;base64,${"A".repeat(10_000)}`)).toBe("data:…");
  expect(keptSourceUrl("blob:https://shop.test/5b1c")).toBe("blob:…");
  expect(keptSourceUrl(`https://shop.test/?q=${"x".repeat(5_000)}`)).toHaveLength(2_048);
});
