import { NotFoundError, QuotaExceededError } from "@bas/errors";
import { lockUntilCommit } from "@bas/event-store";
import { type Kysely, type Migration, sql } from "kysely";
import type { WorkspaceFileRecord, WorkspaceRecord, WorkspaceStore } from "../../app/ports";
import type { SessionsDb } from "./schema";

/** Workspaces and their file catalogues are source data (what callers stored): migrated, never rebuilt. */
export const workspaceMigrations: Record<string, Migration> = {
  "005_workspaces": {
    async up(db) {
      await sql`create table workspaces (
        id text primary key,
        project_id text not null,
        name text,
        used_bytes bigint not null default 0,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        deleted_at timestamptz)`.execute(db);
      await sql`create index workspaces_by_project on workspaces (project_id, created_at desc, id desc)
        where deleted_at is null`.execute(db);
      // "C" collation: paths sort and compare byte by byte, so a page of a listing ends where the next one starts.
      await sql`create table workspace_files (
        workspace_id text not null,
        path text collate "C" not null,
        blob_ref text not null,
        size bigint not null,
        content_type text not null,
        updated_at timestamptz not null,
        primary key (workspace_id, path))`.execute(db);
    },
  },
  // A v4 upload's id stays with its file until a later write replaces it: a run attaches the file by it.
  "006_workspace_file_upload_ids": {
    async up(db) {
      await sql`alter table workspace_files add column upload_id text`.execute(db);
      await sql`create index workspace_files_by_upload on workspace_files (workspace_id, upload_id)
        where upload_id is not null`.execute(db);
    },
  },
  // Blobs no file refers to any more, written in the transaction that let them go and removed once deleted: a blob
  // store that is away, or a crash before the delete, leaves a row to retry instead of bytes nobody knows of.
  "007_released_blobs": {
    async up(db) {
      await sql`create table released_blobs (
        blob_ref text primary key,
        released_at timestamptz not null)`.execute(db);
    },
  },
};

/** Records blobs as released, in the transaction that stopped referring to them. */
async function releaseBlobs(trx: Kysely<SessionsDb>, refs: readonly string[]): Promise<void> {
  if (!refs.length) return;
  await sql`insert into released_blobs (blob_ref, released_at)
    select unnest(${[...refs]}::text[]), now() on conflict do nothing`.execute(trx);
}

interface WorkspaceRow {
  id: string;
  project_id: string;
  name: string | null;
  created_at: Date;
  updated_at: Date;
}

interface FileRow {
  path: string;
  size: string;
  content_type: string;
  updated_at: Date;
  blob_ref: string;
}

const workspaceOf = (r: WorkspaceRow): WorkspaceRecord => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const fileOf = (r: FileRow): WorkspaceFileRecord => ({
  path: r.path,
  size: Number(r.size),
  contentType: r.content_type,
  lastModified: r.updated_at,
  blobRef: r.blob_ref,
});

const FIELDS = sql`id, project_id, name, created_at, updated_at`;
const notFound = () => new NotFoundError("Workspace not found");

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** `uploadGraceMs`: how long an expected upload's blob waits for its commit before it is swept (`expectBlob`). */
export function createWorkspaceStore(db: Kysely<SessionsDb>, uploadGraceMs = 60 * 60_000): WorkspaceStore {
  return {
    async create({ id, projectId, name }, maxPerProject) {
      return db.transaction().execute(async (trx) => {
        await lockUntilCommit(trx, `workspaces/${projectId}`);
        const { rows } = await sql<WorkspaceRow>`insert into workspaces (id, project_id, name, created_at, updated_at)
          select ${id}, ${projectId}, ${name}, now(), now()
          where (select count(*) from workspaces where project_id = ${projectId} and deleted_at is null) < ${maxPerProject}
          returning ${FIELDS}`.execute(trx);
        return rows[0] && workspaceOf(rows[0]);
      });
    },

    async ensure({ id, projectId, name }) {
      await sql`insert into workspaces (id, project_id, name, created_at, updated_at)
        values (${id}, ${projectId}, ${name}, now(), now())
        on conflict (id) do update set deleted_at = null, updated_at = now()
        where workspaces.deleted_at is not null and workspaces.project_id = ${projectId}`.execute(db);
    },

    async get(projectId, id) {
      const { rows } = await sql<WorkspaceRow>`select ${FIELDS} from workspaces
        where id = ${id} and project_id = ${projectId} and deleted_at is null`.execute(db);
      return rows[0] && workspaceOf(rows[0]);
    },

    async list(projectId, offset, limit) {
      const { rows } = await sql<WorkspaceRow & { total: string }>`select ${FIELDS}, count(*) over () as total
        from workspaces where project_id = ${projectId} and deleted_at is null
        order by created_at desc, id desc offset ${offset} limit ${limit}`.execute(db);
      let total = rows.length ? Number(rows[0].total) : 0;
      if (!rows.length && offset > 0) {
        const counted = await sql<{ n: string }>`select count(*) as n from workspaces
          where project_id = ${projectId} and deleted_at is null`.execute(db);
        total = Number(counted.rows[0].n);
      }
      return { items: rows.map(workspaceOf), total };
    },

    async rename(projectId, id, name) {
      const { rows } = await sql<WorkspaceRow>`update workspaces set name = ${name}, updated_at = now()
        where id = ${id} and project_id = ${projectId} and deleted_at is null returning ${FIELDS}`.execute(db);
      return rows[0] && workspaceOf(rows[0]);
    },

    remove(projectId, id) {
      return db.transaction().execute(async (trx) => {
        const { rows } = await sql`update workspaces set deleted_at = now(), used_bytes = 0
          where id = ${id} and project_id = ${projectId} and deleted_at is null returning id`.execute(trx);
        if (!rows.length) return undefined;
        const files = await sql<{ blob_ref: string }>`delete from workspace_files where workspace_id = ${id}
          returning blob_ref`.execute(trx);
        const refs = files.rows.map((f) => f.blob_ref);
        await releaseBlobs(trx, refs);
        return refs;
      });
    },

    async usedBytes(projectId, id) {
      const { rows } = await sql<{ used_bytes: string }>`select used_bytes from workspaces
        where id = ${id} and project_id = ${projectId} and deleted_at is null`.execute(db);
      return rows[0] && Number(rows[0].used_bytes);
    },

    async listFiles(workspaceId, { prefix, after, limit }) {
      const { rows } = await sql<FileRow>`select path, size, content_type, updated_at, blob_ref from workspace_files
        where workspace_id = ${workspaceId} and starts_with(path, ${prefix})
          ${after === undefined ? sql`` : sql`and path > ${after}`}
        order by path limit ${limit}`.execute(db);
      return rows.map(fileOf);
    },

    async listLevel(workspaceId, { prefix, after, limit }) {
      // A path with a "/" after the prefix stands for its folder (the prefix, the next segment and the "/"): one row
      // per folder, ordered with the files by the same key, so a page ends where the next one starts.
      const { rows } = await sql<FileRow & { folder: string | null }>`select distinct on (key)
          folder, path, size, content_type, updated_at, blob_ref
        from (select path, size, content_type, updated_at, blob_ref,
            case when strpos(substr(path, char_length(${prefix}) + 1), '/') > 0
              then substr(path, 1, char_length(${prefix}) + strpos(substr(path, char_length(${prefix}) + 1), '/'))
            end as folder
          from workspace_files where workspace_id = ${workspaceId} and starts_with(path, ${prefix})) entries
        cross join lateral (select coalesce(folder, path) as key) k
        ${after === undefined ? sql`` : sql`where key > ${after}`}
        order by key limit ${limit}`.execute(db);
      return rows.map((r) => (r.folder === null ? { file: fileOf(r) } : { folder: r.folder }));
    },

    async filesAt(workspaceId, paths) {
      if (!paths.length) return [];
      const { rows } = await sql<FileRow>`select path, size, content_type, updated_at, blob_ref from workspace_files
        where workspace_id = ${workspaceId} and path = any(${[...paths]}::text[])`.execute(db);
      return rows.map(fileOf);
    },

    commit(projectId, workspaceId, file, maxBytes) {
      return db.transaction().execute(async (trx) => {
        // The workspace's row is the lock: commits to one workspace take turns, so two cannot both fit the quota.
        const ws = await sql<{ used_bytes: string }>`select used_bytes from workspaces
          where id = ${workspaceId} and project_id = ${projectId} and deleted_at is null for update`.execute(trx);
        if (!ws.rows.length) throw notFound();
        const before = await sql<{ size: string; blob_ref: string }>`select size, blob_ref from workspace_files
          where workspace_id = ${workspaceId} and path = ${file.path}`.execute(trx);
        const replaced = before.rows[0];
        const used = Number(ws.rows[0].used_bytes) - (replaced ? Number(replaced.size) : 0) + file.size;
        if (used > maxBytes) {
          throw new QuotaExceededError(
            `Workspace storage quota exceeded: ${file.path} (${megabytes(file.size)}) would bring the workspace to ` +
              `${megabytes(used)} of its ${megabytes(maxBytes)}; delete files first`,
          );
        }
        const { rows } = await sql<FileRow>`insert into workspace_files
            (workspace_id, path, blob_ref, size, content_type, updated_at, upload_id)
          values (${workspaceId}, ${file.path}, ${file.blobRef}, ${file.size}, ${file.contentType}, now(),
            ${file.uploadId ?? null})
          on conflict (workspace_id, path) do update set blob_ref = excluded.blob_ref, size = excluded.size,
            content_type = excluded.content_type, updated_at = excluded.updated_at, upload_id = excluded.upload_id
          returning path, size, content_type, updated_at, blob_ref`.execute(trx);
        await sql`update workspaces set used_bytes = ${used}, updated_at = now() where id = ${workspaceId}`.execute(
          trx,
        );
        const replacedBlobRef = replaced && replaced.blob_ref !== file.blobRef ? replaced.blob_ref : null;
        if (replacedBlobRef) await releaseBlobs(trx, [replacedBlobRef]);
        // A file's blob now: no longer one to sweep (`expectBlob`).
        await sql`delete from released_blobs where blob_ref = ${file.blobRef}`.execute(trx);
        return { file: fileOf(rows[0]), replacedBlobRef };
      });
    },

    async filesByUpload(workspaceId, uploadIds) {
      if (!uploadIds.length) return [];
      const { rows } = await sql<{ upload_id: string; path: string; content_type: string; size: string }>`
        select upload_id, path, content_type, size from workspace_files
        where workspace_id = ${workspaceId} and upload_id = any(${[...uploadIds]}::text[])`.execute(db);
      return rows.map((r) => ({
        uploadId: r.upload_id,
        path: r.path,
        contentType: r.content_type,
        size: Number(r.size),
      }));
    },

    deleteFile(workspaceId, path) {
      return db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ blob_ref: string; size: string }>`delete from workspace_files
          where workspace_id = ${workspaceId} and path = ${path} returning blob_ref, size`.execute(trx);
        if (!rows.length) return null;
        await sql`update workspaces set used_bytes = used_bytes - ${Number(rows[0].size)}, updated_at = now()
          where id = ${workspaceId}`.execute(trx);
        await releaseBlobs(trx, [rows[0].blob_ref]);
        return rows[0].blob_ref;
      });
    },

    async expectBlob(ref) {
      await sql`insert into released_blobs (blob_ref, released_at)
        values (${ref}, now() + ${uploadGraceMs} * interval '1 millisecond') on conflict do nothing`.execute(db);
    },

    async releasedBlobs(limit) {
      const { rows } = await sql<{ blob_ref: string }>`select blob_ref from released_blobs
        where released_at <= now() order by released_at limit ${limit}`.execute(db);
      return rows.map((r) => r.blob_ref);
    },

    async forgetReleased(refs) {
      if (!refs.length) return;
      await sql`delete from released_blobs where blob_ref = any(${[...refs]}::text[])`.execute(db);
    },
  };
}
