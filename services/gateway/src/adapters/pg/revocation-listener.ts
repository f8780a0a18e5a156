import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "pg";
import { KEY_REVOKED_CHANNEL } from "./pg-project-store";

export interface RevocationListener {
  close(): Promise<void>;
}

export interface RevocationListenerOptions {
  connectionString: string;
  onRevoked(keyId: string): void;
  /** Called after (re)connecting: notices sent while disconnected are lost, so caches must be dropped. */
  onResync(): void;
  log?: { warn(o: object, msg: string): void };
  /** How often the connection is checked with a query of its own (default 15 s). */
  heartbeatMs?: number;
  /** How long a check or a connection attempt may take before the connection counts as lost (default 5 s). */
  timeoutMs?: number;
}

/**
 * Listens for key revocations announced by any gateway or the CLI (Postgres NOTIFY), so a revoked key stops working
 * everywhere within moments instead of after the cache TTL. Reconnects on its own, also when the connection dies
 * without a word (a failover, a dropped NAT entry): a listener only reads, so only a query of its own can tell.
 */
export async function startRevocationListener(options: RevocationListenerOptions): Promise<RevocationListener> {
  let closed = false;
  let client: Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const timeoutMs = options.timeoutMs ?? 5_000;

  async function connect(): Promise<void> {
    const c = new Client({
      connectionString: options.connectionString,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
    });
    c.on("notification", (msg) => {
      if (msg.channel === KEY_REVOKED_CHANNEL && msg.payload) options.onRevoked(msg.payload);
    });
    c.on("error", () => reconnect(c));
    c.on("end", () => reconnect(c));
    await c.connect();
    await c.query(`LISTEN ${KEY_REVOKED_CHANNEL}`);
    if (closed) return void c.end().catch(() => undefined);
    client = c;
    options.onResync();
  }

  function reconnect(failed: Client) {
    if (closed || client !== failed) return;
    client = undefined;
    // Not end(): on a dead connection it would wait for an answer that never comes.
    failed.connection.stream.destroy();
    options.log?.warn({}, "revocation listener lost its connection; reconnecting");
    const attempt = () => {
      retry = undefined;
      if (closed) return;
      connect().catch(() => {
        retry = setTimeout(attempt, 1_000);
      });
    };
    retry = setTimeout(attempt, 250);
  }

  await connect();
  let checking = false;
  const heartbeat = setInterval(() => {
    const c = client;
    if (!c || checking) return;
    checking = true;
    c.query("select 1")
      .catch(() => reconnect(c))
      .finally(() => {
        checking = false;
      });
  }, options.heartbeatMs ?? 15_000);
  return {
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      if (retry) clearTimeout(retry);
      const last = client;
      if (!last) return;
      // A connection that went silent would never answer the goodbye: it gets timeoutMs, then the socket is closed.
      await Promise.race([last.end().catch(() => undefined), sleep(timeoutMs, undefined, { ref: false })]);
      last.connection.stream.destroy();
    },
  };
}
