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
}

/**
 * Listens for key revocations announced by any gateway or the CLI (Postgres NOTIFY), so a revoked key stops working
 * everywhere within moments instead of after the cache TTL. Reconnects on its own.
 */
export async function startRevocationListener(options: RevocationListenerOptions): Promise<RevocationListener> {
  let closed = false;
  let client: Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const c = new Client({ connectionString: options.connectionString });
    c.on("notification", (msg) => {
      if (msg.channel === KEY_REVOKED_CHANNEL && msg.payload) options.onRevoked(msg.payload);
    });
    c.on("error", () => reconnect(c));
    c.on("end", () => reconnect(c));
    await c.connect();
    await c.query(`LISTEN ${KEY_REVOKED_CHANNEL}`);
    client = c;
    options.onResync();
  }

  function reconnect(failed: Client) {
    if (closed || client !== failed) return;
    client = undefined;
    failed.end().catch(() => undefined);
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
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
