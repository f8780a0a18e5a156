import { type BlobStore, removeEach } from "@bas/blobs";
import { InvalidArgumentError, NotFoundError, PlanLimitError, QuotaExceededError } from "@bas/errors";
import { normalizeFilePath } from "../domain/workspace-path";
import { derivedId } from "./derived-id";
import type { AttachedFile } from "../domain/events";
import type { NewWorkspaceFile, WorkspaceFileRecord, WorkspaceRecord, WorkspaceStore } from "./ports";

export interface WorkspacesDeps {
  store: WorkspaceStore;
  /** Where the files' bytes are: a replaced or deleted file's blob is deleted. */
  blobs: Pick<BlobStore, "delete">;
  /** Most bytes a workspace's files may take together (WORKSPACE_MAX_BYTES). */
  maxBytes: number;
  /** Most workspaces a project may keep (MAX_WORKSPACES_PER_PROJECT); its default one is made even so. */
  maxPerProject: number;
  newId: () => string;
  log: { warn(o: object, msg: string): void };
}

export interface UploadRequest {
  path: string;
  size: number;
  contentType: string;
}

const notFound = () => new NotFoundError("Workspace not found");

/** A page of a file listing: where the next one starts is the last path, opaque to callers. */
const encodeCursor = (path: string) => Buffer.from(path, "utf8").toString("base64url");
function decodeCursor(cursor: string): string {
  const path = Buffer.from(cursor, "base64url").toString("utf8");
  if (!path || encodeCursor(path) !== cursor) {
    throw new InvalidArgumentError("cursor is not one this API returned", { field: ["query", "cursor"] });
  }
  return path;
}

/** Workspaces: a project's files that outlive sessions and runs, within a quota. */
export function createWorkspaces(deps: WorkspacesDeps) {
  const { store } = deps;

  async function existing(projectId: string, id: string): Promise<WorkspaceRecord> {
    const found = await store.get(projectId, id);
    if (!found) throw notFound();
    return found;
  }

  /**
   * Deletes blobs nobody refers to any more (the store recorded them as released with the change that let them go),
   * then forgets them; one that cannot be deleted now stays recorded for the next sweep.
   */
  async function release(refs: readonly string[]): Promise<number> {
    const { removed, failure } = await removeEach(refs, (ref) => deps.blobs.delete(ref));
    if (failure) deps.log.warn(failure, "could not delete released workspace blobs; the next sweep tries again");
    await store.forgetReleased(removed);
    return removed.length;
  }

  /** In the background: a failure is logged, the blobs stay recorded. */
  const releaseSoon = (refs: readonly string[]) => {
    release(refs).catch((err) => deps.log.warn({ err }, "could not release workspace blobs"));
  };

  return {
    async create(projectId: string, name: string | null): Promise<WorkspaceRecord> {
      const created = await store.create({ id: deps.newId(), projectId, name }, deps.maxPerProject);
      if (!created) {
        throw new PlanLimitError(
          `This project has reached its limit of ${deps.maxPerProject} workspaces. Delete one to create another.`,
        );
      }
      return created;
    },
    get: existing,
    list: (projectId: string, offset: number, limit: number) => store.list(projectId, offset, limit),
    async rename(projectId: string, id: string, name: string | null) {
      const renamed = await store.rename(projectId, id, name);
      if (!renamed) throw notFound();
      return renamed;
    },
    async remove(projectId: string, id: string) {
      const refs = await store.remove(projectId, id);
      if (!refs) throw notFound();
      releaseSoon(refs);
    },

    /** The project's default workspace (every v4 run without one named uses it), created on first use. */
    async defaultFor(projectId: string): Promise<string> {
      const id = derivedId("workspace", projectId, "default");
      await store.ensure({ id, projectId, name: "default" });
      return id;
    },

    async usage(projectId: string, id: string) {
      const used = await store.usedBytes(projectId, id);
      if (used === undefined) throw notFound();
      return { usedBytes: used, maxBytes: deps.maxBytes };
    },

    /** A page of files by path; `shallow`: one level, folders in place of the files below them. */
    async listFiles(
      projectId: string,
      id: string,
      options: { prefix: string; limit: number; cursor?: string; shallow?: boolean },
    ): Promise<{ files: WorkspaceFileRecord[]; folders: string[]; nextCursor: string | undefined }> {
      await existing(projectId, id);
      const query = {
        prefix: options.prefix,
        limit: options.limit + 1,
        ...(options.cursor ? { after: decodeCursor(options.cursor) } : {}),
      };
      const entries = options.shallow
        ? await store.listLevel(id, query)
        : (await store.listFiles(id, query)).map((file) => ({ file }));
      const page = entries.slice(0, options.limit);
      const last = page.at(-1);
      const more = entries.length > options.limit && last !== undefined;
      return {
        files: page.flatMap((e) => ("file" in e ? [e.file] : [])),
        folders: page.flatMap((e) => ("folder" in e ? [e.folder] : [])),
        nextCursor: more ? encodeCursor("file" in last ? last.file.path : last.folder) : undefined,
      };
    },

    async getFile(projectId: string, id: string, rawPath: string): Promise<WorkspaceFileRecord> {
      await existing(projectId, id);
      const path = normalizeFilePath(rawPath);
      const [file] = await store.filesAt(id, [path]);
      if (!file) throw new NotFoundError(`No file at ${path} in the workspace`);
      return file;
    },

    /**
     * The normalised paths of files about to be uploaded, whether each replaces a file, and a first check that they fit
     * the quota (so the caller hears it before uploading; the commit checks again, atomically).
     */
    async prepareUploads(projectId: string, id: string, uploads: readonly UploadRequest[]) {
      const paths = uploads.map((u, i) => normalizeFilePath(u.path, ["body", "files", i, "name"]));
      if (new Set(paths).size !== paths.length) {
        throw new InvalidArgumentError("two files of the request have the same path", { field: ["body", "files"] });
      }
      const used = await store.usedBytes(projectId, id);
      if (used === undefined) throw notFound();
      const present = new Map((await store.filesAt(id, paths)).map((f) => [f.path, f.size]));
      const after = uploads.reduce((sum, u, i) => sum + u.size - (present.get(paths[i]) ?? 0), used);
      if (after > deps.maxBytes) {
        throw new QuotaExceededError(
          `Workspace storage quota exceeded: these files would bring the workspace to ${after} bytes of its ` +
            `${deps.maxBytes}; delete files first`,
        );
      }
      return paths.map((path) => ({ path, willOverride: present.has(path) }));
    },

    /** An upload's blob is about to be stored: it is swept unless `commitFile` records it within the grace. */
    expectUpload: (blobRef: string) => store.expectBlob(blobRef),

    async commitFile(projectId: string, id: string, file: NewWorkspaceFile) {
      const path = normalizeFilePath(file.path);
      const { file: stored, replacedBlobRef } = await store.commit(projectId, id, { ...file, path }, deps.maxBytes);
      if (replacedBlobRef) releaseSoon([replacedBlobRef]);
      return stored;
    },

    async deleteFile(projectId: string, id: string, rawPath: string) {
      await existing(projectId, id);
      const ref = await store.deleteFile(id, normalizeFilePath(rawPath, ["query", "path"]));
      if (ref) releaseSoon([ref]);
    },

    /** Deletes the blobs released earlier that are still there (the blob store was away, or a crash came first). */
    async sweepReleasedBlobs(): Promise<number> {
      return release(await store.releasedBlobs(100));
    },

    /**
     * The files a run is pointed to, in the order given, by the ids of their v4 uploads, and the ids that name none: a
     * file must be in the run's workspace, uploaded, and not replaced since (a replaced file is another file).
     */
    async attachedFiles(
      projectId: string,
      id: string,
      uploadIds: readonly string[],
    ): Promise<{ files: AttachedFile[]; missing: string[] }> {
      await existing(projectId, id);
      const found = new Map(
        (await store.filesByUpload(id, uploadIds)).map(({ uploadId, ...file }) => [uploadId, file]),
      );
      return {
        files: uploadIds.flatMap((uploadId) => {
          const file = found.get(uploadId);
          return file ? [{ id: uploadId, ...file }] : [];
        }),
        missing: uploadIds.filter((uploadId) => !found.has(uploadId)),
      };
    },
  };
}

export type Workspaces = ReturnType<typeof createWorkspaces>;
