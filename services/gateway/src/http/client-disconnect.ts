import { status as grpcStatus } from "@grpc/grpc-js";
import { ClientError } from "@bas/service-kit";
import type { Context } from "koa";

// What Node and its streams report when the other end of a socket went away.
const DISCONNECT_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_DESTROYED",
]);

/**
 * True when a failure is only the consequence of the caller hanging up: its socket is gone, and the error is the
 * cancellation that followed (our gRPC call cancelled through the request's signal, an aborted stream, a reset).
 * Nobody is left to answer, and nothing is wrong with the service: worth a debug line, not an error.
 * A real fault that happens to coincide with a hang-up is not one of these errors, so it is still reported.
 */
export function isClientDisconnect(err: unknown, ctx: Context): boolean {
  // raw-body: the client stopped sending its body half way.
  if ((err as { type?: string } | null)?.type === "request.aborted") return true;
  if (ctx.writable) return false;
  if (err instanceof ClientError) return err.code === grpcStatus.CANCELLED;
  const { name, code } = (err ?? {}) as { name?: string; code?: string };
  return name === "AbortError" || (code !== undefined && DISCONNECT_CODES.has(code));
}
