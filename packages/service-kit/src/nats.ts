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
 */
export async function connectNats(url: string, name: string): Promise<Nats> {
  const nc = await connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    noAsyncTraces: true,
  });
  return { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
}
