import { createHash } from "node:crypto";

/**
 * A UUID (version 5 layout) derived from a key: the same charge or decision always gets the same event id, so
 * JetStream's Nats-Msg-Id dedupe drops a blind retry of an append whose acknowledgement was lost.
 */
export function deterministicId(key: string): string {
  const bytes = createHash("sha1").update(`bas-billing:${key}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
