import { connect, type Socket } from "node:net";
import { type PeerCertificate, connect as tlsConnect } from "node:tls";

/** Reads one SMTP reply (its last line is "NNN text"), whole. */
function replyOf(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (/(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(text)) {
        socket.off("data", onData).off("error", reject);
        resolve(text);
      }
    };
    socket.on("data", onData).once("error", reject);
  });
}

/**
 * Talks to an SMTP receiver as a sending server would: the extensions its EHLO answer lists and, when STARTTLS is one,
 * the certificate it presents after STARTTLS (not verified: the test compares it).
 */
export async function probeSmtp(port: number): Promise<{ extensions: string[]; certificate?: PeerCertificate }> {
  const socket = connect(port, "127.0.0.1");
  try {
    await replyOf(socket);
    socket.write("EHLO sender.test\r\n");
    const extensions = (await replyOf(socket))
      .split("\r\n")
      .slice(1)
      .filter(Boolean)
      .map((line) => line.slice(4));
    if (!extensions.includes("STARTTLS")) return { extensions };
    socket.write("STARTTLS\r\n");
    expect(await replyOf(socket)).toMatch(/^220 /);
    const secured = tlsConnect({ socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => secured.once("secureConnect", resolve).once("error", reject));
    const certificate = secured.getPeerCertificate();
    secured.destroy();
    return { extensions, certificate };
  } finally {
    socket.destroy();
  }
}
