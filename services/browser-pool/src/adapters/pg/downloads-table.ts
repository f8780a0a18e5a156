import type { StoredEvent } from "@bas/event-store";
import { type Generated, type Kysely, sql, type Transaction } from "kysely";
import type { BrowserFileDownloaded } from "../../domain/events";
import type { DownloadPage } from "../../app/ports";

/** One row per file a browser downloaded, in the order they were kept (`seq` is the list's cursor). */
export const DOWNLOADS_TABLE = "browser_pool_downloads";

export interface DownloadsTable {
  seq: Generated<string>;
  browser_id: string;
  guid: string;
  file_name: string;
  url: string;
  size: string;
  ref: string;
  downloaded_at: Date;
}

type Db = { [DOWNLOADS_TABLE]: DownloadsTable };

export async function createDownloadsTable(db: Kysely<any>): Promise<void> {
  await sql`create table if not exists ${sql.table(DOWNLOADS_TABLE)} (
    seq bigserial primary key,
    browser_id text not null,
    guid text not null,
    file_name text not null,
    url text not null,
    size bigint not null,
    ref text not null,
    downloaded_at timestamptz not null,
    unique (browser_id, guid))`.execute(db);
}

export async function insertDownload(trx: Transaction<any>, event: StoredEvent<BrowserFileDownloaded>): Promise<void> {
  const d = event.data;
  await (trx as Transaction<Db>)
    .insertInto(DOWNLOADS_TABLE)
    .values({
      browser_id: event.aggregateId,
      guid: d.guid,
      file_name: d.fileName,
      url: d.url,
      size: String(d.size),
      ref: d.ref,
      downloaded_at: new Date(event.occurredAt),
    })
    .onConflict((oc) => oc.columns(["browser_id", "guid"]).doNothing())
    .execute();
}

/** A page of a browser's downloads, oldest first, after the row `after` (a cursor this list gave). */
export async function listDownloads(
  db: Kysely<any>,
  browserId: string,
  page: { limit: number; after: string | undefined },
): Promise<DownloadPage> {
  const rows = await (db as Kysely<Db>)
    .selectFrom(DOWNLOADS_TABLE)
    .selectAll()
    .where("browser_id", "=", browserId)
    .$if(page.after !== undefined, (q) => q.where("seq", ">", page.after!))
    .orderBy("seq")
    .limit(page.limit + 1)
    .execute();
  const items = rows.slice(0, page.limit);
  const hasMore = rows.length > page.limit;
  return {
    items: items.map((r) => ({
      fileName: r.file_name,
      size: Number(r.size),
      ref: r.ref,
      downloadedAt: r.downloaded_at,
    })),
    nextCursor: hasMore ? items.at(-1)!.seq : null,
  };
}
