import { randomBytes } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { createDatabaseIfMissing } from "@bas/embedded-infra";
import { createDb, ensureStreams, type StreamNames, streamNames } from "@bas/event-store";
import type { Kysely } from "kysely";

/** A namespace nobody else uses: streams and subjects of one test never meet another's. */
export function testNamespace(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

export function natsUrl(): string {
  const url = process.env.NATS_URL;
  if (!url) throw new Error("NATS_URL is not set: run tests through jest (globalSetup starts nats-server)");
  return url;
}

/** A fresh, empty database on the test cluster; returns its connection string. */
export async function createTestDatabase(prefix = "t"): Promise<string> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error("DATABASE_URL is not set: run tests through jest (globalSetup starts Postgres)");
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new URL(base);
  admin.pathname = "/postgres";
  await createDatabaseIfMissing(admin.toString(), name);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface TestInfra {
  namespace: string;
  streams: StreamNames;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  databaseUrl: string;
  db: Kysely<any>;
  close(): Promise<void>;
}

/** A NATS connection with this test's streams created, and a fresh database. */
export async function createTestInfra(): Promise<TestInfra> {
  const namespace = testNamespace();
  const streams = streamNames(namespace);
  const nc = await connect({ servers: natsUrl() });
  const jsm = await jetstreamManager(nc);
  await ensureStreams(jsm, streams);
  const databaseUrl = await createTestDatabase();
  const db = createDb<any>(databaseUrl);
  return {
    namespace,
    streams,
    nc,
    js: jetstream(nc),
    jsm,
    databaseUrl,
    db,
    async close() {
      await db.destroy();
      for (const name of [streams.events.stream, streams.work.stream, streams.usage.stream, streams.health.stream]) {
        await jsm.streams.delete(name).catch(() => undefined);
      }
      await nc.drain();
    },
  };
}
