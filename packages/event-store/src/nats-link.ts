import type { NatsConnection } from "@nats-io/transport-node";

/** Whether a NATS connection is up, and word the moment it goes down. */
export interface NatsLink {
  readonly up: boolean;
  /** Calls `listener` each time the connection goes down; the returned function stops that. */
  onDown(listener: () => void): () => void;
}

const links = new WeakMap<NatsConnection, NatsLink>();

/** The link of `nc`: one status listener per connection, however many ask; it ends when the connection closes. */
export function natsLinkOf(nc: NatsConnection): NatsLink {
  const known = links.get(nc);
  if (known) return known;
  let up = !nc.isClosed();
  const listeners = new Set<() => void>();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        up = false;
        for (const listener of listeners) listener();
      } else if (status.type === "reconnect") {
        up = true;
      }
    }
    up = false;
  })();
  const link: NatsLink = {
    get up() {
      return up;
    },
    onDown(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  links.set(nc, link);
  return link;
}
