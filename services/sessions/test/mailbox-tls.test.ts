import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mailbox } from "@bas/proto";
import { ConfigError, connectClient, type PromiseClient } from "@bas/service-kit";
import { eventually } from "@bas/testing";
import { createTransport } from "nodemailer";
import { generate } from "selfsigned";
import { loadSessionsConfig } from "../src/config";
import { createRequest, type Harness, newProject, startHarness } from "./harness";
import { probeSmtp } from "./support/smtp-probe";

/** The MX host's name, which the certificate is for. */
const MX = "mx.mail.test";

async function certificateFor(name: string) {
  const pair = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: name }] }],
  });
  return { cert: pair.cert, key: pair.private, fingerprint: new X509Certificate(pair.cert).fingerprint256 };
}

let dir: string;
let certFile: string;
let keyFile: string;
let first: Awaited<ReturnType<typeof certificateFor>>;
let h: Harness;
let mail: PromiseClient<mailbox.MailboxClient>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "smtp-tls-"));
  certFile = join(dir, "tls.crt");
  keyFile = join(dir, "tls.key");
  first = await certificateFor(MX);
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  h = await startHarness({ SMTP_TLS_CERT_FILE: certFile, SMTP_TLS_KEY_FILE: keyFile }, { smtpTlsCheckEveryMs: 100 });
  mail = connectClient(mailbox.MailboxClient, `127.0.0.1:${h.service.grpcPort}`);
});
afterAll(async () => {
  mail?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

const project = newProject();

/** Sends as a mail server that insists on encryption and trusts only `ca` for the MX host's name. */
function sendEncrypted(to: string, text: string, ca: string) {
  const transport = createTransport({
    host: "127.0.0.1",
    port: h.service.smtpPort,
    secure: false,
    requireTLS: true,
    tls: { ca, servername: MX },
  });
  return transport.sendMail({ from: "shop@shop.test", to, subject: "Code", text }).finally(() => transport.close());
}

test("with a certificate the receiver offers STARTTLS: a sender that insists on it delivers, and so does a plain one", async () => {
  const { extensions, certificate } = await probeSmtp(h.service.smtpPort);
  expect(extensions).toContain("STARTTLS");
  expect(extensions.filter((e) => e.startsWith("AUTH"))).toEqual([]);
  expect(certificate?.fingerprint256).toBe(first.fingerprint);

  const session = await h.api.createSession(createRequest(project, { task: "Sign up", inbox: true }));
  const sent = await sendEncrypted(session.inboxEmail!, "Your code is 271828.", first.cert);
  expect(sent.accepted).toEqual([session.inboxEmail]);
  // A sender that does not encrypt is still taken: STARTTLS is offered, not required (as between mail servers).
  const plain = createTransport({ host: "127.0.0.1", port: h.service.smtpPort, secure: false, ignoreTLS: true });
  await plain
    .sendMail({ from: "shop@shop.test", to: session.inboxEmail!, text: "Plain." })
    .finally(() => plain.close());
  const mails = (await mail.listMail({ sessionId: session.id })).mails.map((m) => m.preview);
  expect(mails).toEqual(["Plain.", "Your code is 271828."]);
});

test("a renewed certificate is taken without a restart; a pair caught half written is not", async () => {
  const renewed = await certificateFor(MX);
  // The key first: for a moment the files are not a pair, and the receiver keeps offering the old certificate.
  writeFileSync(keyFile, renewed.key);
  await new Promise((r) => setTimeout(r, 500));
  expect((await probeSmtp(h.service.smtpPort)).certificate?.fingerprint256).toBe(first.fingerprint);

  writeFileSync(certFile, renewed.cert);
  await eventually(
    async () => (await probeSmtp(h.service.smtpPort)).certificate?.fingerprint256,
    (fingerprint) => fingerprint === renewed.fingerprint,
  );
  const session = await h.api.createSession(createRequest(project, { task: "Sign up", inbox: true }));
  await sendEncrypted(session.inboxEmail!, "Renewed.", renewed.cert);
  await expect(sendEncrypted(session.inboxEmail!, "Old trust.", first.cert)).rejects.toThrow(/certificate/i);
});

test("a certificate without its key, or a key that is not the certificate's, stops the start and says so", async () => {
  const base = { SECRETS_KEY: "a".repeat(64), PUBLIC_URL: "http://bas.test/" };
  expect(() => loadSessionsConfig({ ...base, SMTP_TLS_CERT_FILE: certFile })).toThrow(
    "SMTP_TLS_CERT_FILE, SMTP_TLS_KEY_FILE: give both (STARTTLS) or neither (plain SMTP)",
  );
  const [mine, other] = [join(dir, "mine.crt"), join(dir, "other.key")];
  writeFileSync(mine, first.cert);
  writeFileSync(other, (await certificateFor(MX)).key);
  const mismatched = { ...base, SMTP_TLS_CERT_FILE: mine, SMTP_TLS_KEY_FILE: other };
  expect(() => loadSessionsConfig(mismatched)).toThrow(ConfigError);
  expect(() => loadSessionsConfig(mismatched)).toThrow(/are not a certificate and its key/);
  const missing = { ...base, SMTP_TLS_CERT_FILE: join(dir, "nope.crt"), SMTP_TLS_KEY_FILE: other };
  expect(() => loadSessionsConfig(missing)).toThrow(/cannot read .*nope\.crt/);
});
