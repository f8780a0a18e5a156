import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";

export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * Connects with unlimited reconnects: a NATS restart must not take the service down. Without async traces: by default
 * every request (each JetStream publish, each acknowledged ack) builds two Error objects up front just in case it
 * fails, which was a sixth of billing's CPU; a failure still says what failed, only not from which call site.
 * A ping every 10 s: a link that died without a word (a network partition) is noticed within 30 s, not minutes, and
 * what a dead link must hand over (a projection's lead) goes to a replica that can still reach NATS.
 */
export async function connectNats(url: string, name: string): Promise<Nats> {
  const nc = await connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: 10_000,
    noAsyncTraces: true,
  });
  return { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
}
