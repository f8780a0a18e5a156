import { createUploadUrlSigner } from "../src/upload-signer";

describe("presigned upload URLs", () => {
  let now = 1_000_000;
  const signer = createUploadUrlSigner({ key: "k".repeat(32), baseUrl: "https://api.example.com/", now: () => now });
  const grant = { projectId: "p1", workspaceId: "w1", path: "in/a b.csv", size: 12, contentType: "text/csv" };
  const queryOf = (url: string) => Object.fromEntries(new URL(url).searchParams);

  it("carry the grant, which verifies for the workspace in the URL until it expires", () => {
    const url = signer.sign(grant);
    expect(url.startsWith("https://api.example.com/uploads/w1?")).toBe(true);
    expect(signer.verify("w1", queryOf(url))).toEqual({ ok: true, grant });
    now += 5 * 60 * 1000 + 1000;
    expect(signer.verify("w1", queryOf(url))).toEqual({ ok: false, reason: "expired" });
  });

  it("refuse any change to what was signed", () => {
    const query = queryOf(signer.sign(grant));
    expect(signer.verify("w2", query).ok).toBe(false);
    for (const [key, value] of Object.entries({ project: "p2", path: "in/b.csv", size: "13", type: "text/html" })) {
      expect([key, signer.verify("w1", { ...query, [key]: value })]).toEqual([key, { ok: false, reason: "invalid" }]);
    }
    expect(signer.verify("w1", { ...query, sig: undefined }).ok).toBe(false);
  });

  it("carry a v4 upload's id, which can be neither added, changed nor dropped", () => {
    const withId = { ...grant, uploadId: "5f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b" };
    const query = queryOf(signer.sign(withId));
    expect(signer.verify("w1", query)).toEqual({ ok: true, grant: withId });
    expect(signer.verify("w1", { ...query, upload: "6f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b" }).ok).toBe(false);
    expect(signer.verify("w1", { ...query, upload: undefined }).ok).toBe(false);
    expect(signer.verify("w1", { ...queryOf(signer.sign(grant)), upload: withId.uploadId }).ok).toBe(false);
  });
});
