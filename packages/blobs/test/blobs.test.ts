import { Readable } from "node:stream";
import { randomBytes } from "node:crypto";
import { createTestInfra, type TestInfra } from "@bas/testing";
import {
  BlobDeletedError,
  blobBucketName,
  type BlobStore,
  createBlobUrlSigner,
  createNatsBlobStore,
  InvalidBlobRefError,
} from "../src";

let infra: TestInfra;
let store: BlobStore;

beforeAll(async () => {
  infra = await createTestInfra();
  store = await createNatsBlobStore({ js: infra.js, namespace: infra.namespace });
});
afterAll(async () => {
  await infra.jsm.streams.delete(`OBJ_${blobBucketName(infra.namespace)}`).catch(() => undefined);
  await infra.close();
});

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

test("a put blob reads back byte for byte with its content type, from another store instance too", async () => {
  const png = randomBytes(300_000); // larger than one object-store chunk
  const ref = await store.put(png, { contentType: "image/png", kind: "screenshot" });
  expect(ref).toMatch(/^screenshot-[0-9a-f-]{36}\.png$/);
  const other = await createNatsBlobStore({ js: infra.js, namespace: infra.namespace });
  const blob = await other.get(ref);
  expect(blob?.contentType).toBe("image/png");
  expect(blob?.size).toBe(png.length);
  expect((await readAll(blob!.stream)).equals(png)).toBe(true);
  expect(Buffer.from((await other.getBytes(ref))!.data).equals(png)).toBe(true);
});

test("a stream can be stored under a chosen reference; putting it again overwrites", async () => {
  const ref = `rec-${randomBytes(4).toString("hex")}.webm`;
  await store.put(Readable.from([Buffer.from("first")]), { contentType: "video/webm", ref });
  await store.put(Buffer.from("second"), { contentType: "video/webm", ref });
  expect(Buffer.from((await store.getBytes(ref))!.data).toString()).toBe("second");
});

test("a blob deleted while it is read ends its reader with BlobDeletedError (one that starts reading later too) instead of leaving it waiting or the error unhandled", async () => {
  const watched = await createNatsBlobStore({ js: infra.js, namespace: infra.namespace, deletionCheckMs: 100 });
  const ref = await watched.put(randomBytes(16 * 1024 * 1024), { contentType: "application/octet-stream" });
  const blob = await watched.get(ref);
  await watched.delete(ref);
  // Nobody reads until the deletion has surely been noticed: the error waits for the reader, nothing is unhandled.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await expect(readAll(blob!.stream)).rejects.toThrow(BlobDeletedError);
  expect(await watched.getBytes(ref)).toBeNull();
});

test("unknown and deleted references are null; malformed ones are refused", async () => {
  expect(await store.get("nothing-here")).toBeNull();
  const ref = await store.put(Buffer.from("x"), { contentType: "text/plain" });
  await store.delete(ref);
  expect(await store.get(ref)).toBeNull();
  expect(await store.getBytes(ref)).toBeNull();
  await expect(store.get("../etc/passwd")).rejects.toBeInstanceOf(InvalidBlobRefError);
  await expect(store.put(Buffer.from("x"), { contentType: "text/plain", ref: "a/b" })).rejects.toBeInstanceOf(
    InvalidBlobRefError,
  );
});

describe("signed URLs", () => {
  let clock = 1_700_000_000_000;
  const signer = createBlobUrlSigner({ key: "k".repeat(32), baseUrl: "https://api.test/", now: () => clock });
  const parse = (url: string) => {
    const u = new URL(url);
    return { ref: u.pathname.replace("/blobs/", ""), exp: u.searchParams.get("exp")!, sig: u.searchParams.get("sig")! };
  };

  test("a signed URL points at the blob, is valid for 5 minutes, then expired", () => {
    const url = signer.sign("shot-1.png");
    expect(url.startsWith("https://api.test/blobs/shot-1.png?exp=")).toBe(true);
    const { ref, exp, sig } = parse(url);
    expect(signer.verify(ref, exp, sig)).toBe("valid");
    clock += 5 * 60 * 1000 - 1000;
    expect(signer.verify(ref, exp, sig)).toBe("valid");
    clock += 2000;
    expect(signer.verify(ref, exp, sig)).toBe("expired");
  });

  test("a changed reference, expiry, signature or key is invalid", () => {
    const { ref, exp, sig } = parse(signer.sign("shot-2.png"));
    expect(signer.verify("shot-3.png", exp, sig)).toBe("invalid");
    expect(signer.verify(ref, String(Number(exp) + 3600), sig)).toBe("invalid");
    expect(signer.verify(ref, exp, `${sig.slice(0, -2)}AA`)).toBe("invalid");
    expect(signer.verify(ref, exp, undefined)).toBe("invalid");
    expect(signer.verify(ref, "soon", sig)).toBe("invalid");
    const other = createBlobUrlSigner({ key: "x".repeat(32), baseUrl: "https://api.test", now: () => clock });
    expect(other.verify(ref, exp, sig)).toBe("invalid");
  });

  test("a URL to save the blob as a file name holds only with that name: changed, added or dropped, it is invalid", () => {
    const url = new URL(signer.sign("file-1.csv", "Q3 report ä.csv"));
    const { ref, exp, sig } = parse(url.toString());
    expect(url.searchParams.get("dl")).toBe("Q3 report ä.csv");
    expect(signer.verify(ref, exp, sig, "Q3 report ä.csv")).toBe("valid");
    expect(signer.verify(ref, exp, sig, "evil.html")).toBe("invalid");
    expect(signer.verify(ref, exp, sig)).toBe("invalid");
    const plain = parse(signer.sign("file-1.csv"));
    expect(signer.verify(plain.ref, plain.exp, plain.sig, "renamed.csv")).toBe("invalid");
  });
});
