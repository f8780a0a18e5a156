import {
  createRedactor,
  expandSecrets,
  redactDeep,
  secretKeysIn,
  secretsRefusedOn,
  UnknownSecretError,
} from "./secrets";

test("placeholders are expanded only when typing, and unknown keys are refused", () => {
  expect(secretKeysIn("user <secret>name</secret> pass <secret> pw </secret>")).toEqual(["name", "pw"]);
  expect(expandSecrets("<secret>pw</secret>!", { pw: "hunter2" })).toBe("hunter2!");
  expect(() => expandSecrets("<secret>nope</secret>", { pw: "x" })).toThrow(UnknownSecretError);
});

test("every occurrence of a secret value is replaced by its placeholder, the longest value first", () => {
  const redact = createRedactor({ short: "abc", long: "abcdef", other: "a.b*c" });
  expect(redact("x abcdef y abc z a.b*c")).toBe(
    "x <secret>long</secret> y <secret>short</secret> z <secret>other</secret>",
  );
  expect(redactDeep({ list: ["abc"], n: 1, nested: { s: "abcdef" } }, redact)).toEqual({
    list: ["<secret>short</secret>"],
    n: 1,
    nested: { s: "<secret>long</secret>" },
  });
  expect(createRedactor({})("abc")).toBe("abc");
});

test("a secret bound to hosts: a domain covers itself and its subdomains, *.domain only the subdomains", () => {
  // The matching itself is @bas/egress-policy's (allowed-domains.test.ts).
  const domains = { pw: ["example.com"] };
  expect(secretsRefusedOn("<secret>pw</secret> and <secret>free</secret>", "evil.net", domains)).toEqual(["pw"]);
  expect(secretsRefusedOn("<secret>pw</secret>", "www.example.com", domains)).toEqual([]);
});
