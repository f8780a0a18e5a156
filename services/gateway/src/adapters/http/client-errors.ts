import { STATUS_CODES, type Server } from "node:http";
import type { Duplex } from "node:stream";

/** How long a refused connection is read (and dropped) before it is closed anyway. */
const LINGER_MS = 2_000;

/**
 * Answers a request Node's parser refuses (a header block past the limit: 431, too slow: 408, else 400) and
 * closes the connection gently. Node's default closes it at once, with the rest of the request unread, and a close
 * with unread data makes the kernel reset the connection: the client then often gets ECONNRESET instead of the
 * answer (always so on Node 24, for a large body behind an oversized header). So the answer is sent, our side of
 * the connection ends, and what the client still sends is read and dropped until it ends too (or LINGER_MS passes).
 */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
