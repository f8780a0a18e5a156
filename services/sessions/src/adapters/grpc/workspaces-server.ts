import { isBlobRef } from "@bas/blobs";
import { InvalidArgumentError } from "@bas/errors";
import type { workspaces } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import type { WorkspaceFileRecord, WorkspaceRecord } from "../../app/ports";
import type { Workspaces } from "../../app/workspaces";
import { limitOf, projectIdOf, UUID, workspaceIdOf } from "./requests";

const MAX_NAME_CHARS = 100;
const MAX_CONTENT_TYPE_CHARS = 255;

function nameOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (value.length > MAX_NAME_CHARS) {
    throw new InvalidArgumentError(`name is longer than ${MAX_NAME_CHARS} characters`, { field: ["body", "name"] });
  }
  return value;
}

function sizeOf(value: number, field: (string | number)[]): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError("size must be at least 1", { field });
  return value;
}

function contentTypeOf(value: string, field: (string | number)[]): string {
  if (!value || value.length > MAX_CONTENT_TYPE_CHARS || !/^[\x21-\x7e][\x20-\x7e]*$/.test(value)) {
    throw new InvalidArgumentError("contentType must be a MIME type", { field });
  }
  return value;
}

function blobRefOf(value: string): string {
  if (!isBlobRef(value)) throw new InvalidArgumentError("blob_ref is not a blob reference", { field: ["blob_ref"] });
  return value;
}

/** The id the gateway gave a v4 upload (absent for every other write). */
function uploadIdOf(value: string | undefined): { uploadId?: string } {
  if (value === undefined) return {};
  if (!UUID.test(value)) throw new InvalidArgumentError("upload_id must be a UUID", { field: ["upload_id"] });
  return { uploadId: value.toLowerCase() };
}

const toWorkspace = (w: WorkspaceRecord): workspaces.Workspace => ({ ...w, name: w.name ?? undefined });
const toFile = (f: WorkspaceFileRecord): workspaces.WorkspaceFile => ({ ...f });

/** The `Workspaces` service, for the gateway (REST) and the runner (the agent's file tools). */
export function workspacesServer(w: Workspaces, log?: HandlerLog): workspaces.WorkspacesServer {
  const ids = (req: { projectId: string; workspaceId: string }) =>
    [projectIdOf(req.projectId), workspaceIdOf(req.workspaceId)] as const;
  return unaryService(
    {
      createWorkspace: async (req: workspaces.CreateWorkspaceRequest) =>
        toWorkspace(await w.create(projectIdOf(req.projectId), nameOf(req.name))),
      getWorkspace: async (req: workspaces.GetWorkspaceRequest) => toWorkspace(await w.get(...ids(req))),
      listWorkspaces: async (req: workspaces.ListWorkspacesRequest): Promise<workspaces.ListWorkspacesResponse> => {
        const pageNumber = req.pageNumber || 1;
        const pageSize = limitOf(req.pageSize, 10, 100);
        if (pageNumber < 1) {
          throw new InvalidArgumentError("pageNumber must be at least 1", { field: ["query", "pageNumber"] });
        }
        const found = await w.list(projectIdOf(req.projectId), (pageNumber - 1) * pageSize, pageSize);
        return { items: found.items.map(toWorkspace), totalItems: found.total, pageNumber, pageSize };
      },
      updateWorkspace: async (req: workspaces.UpdateWorkspaceRequest) => {
        const [projectId, id] = ids(req);
        if (!req.fields.includes("name")) return toWorkspace(await w.get(projectId, id));
        return toWorkspace(await w.rename(projectId, id, nameOf(req.name)));
      },
      deleteWorkspace: async (req: workspaces.GetWorkspaceRequest) => {
        await w.remove(...ids(req));
        return {};
      },
      listFiles: async (req: workspaces.ListFilesRequest): Promise<workspaces.ListFilesResponse> => {
        const found = await w.listFiles(...ids(req), {
          prefix: req.prefix,
          limit: limitOf(req.limit, 50, 1000),
          ...(req.cursor ? { cursor: req.cursor } : {}),
          shallow: req.shallow,
        });
        return { files: found.files.map(toFile), folders: found.folders, nextCursor: found.nextCursor };
      },
      getFile: async (req: workspaces.FileRequest) => toFile(await w.getFile(...ids(req), req.path)),
      prepareUploads: async (req: workspaces.PrepareUploadsRequest): Promise<workspaces.PrepareUploadsResponse> => {
        const uploads = req.files.map((f, i) => ({
          path: f.path,
          size: sizeOf(f.size, ["body", "files", i, "size"]),
          contentType: contentTypeOf(f.contentType, ["body", "files", i, "contentType"]),
        }));
        return { files: await w.prepareUploads(...ids(req), uploads) };
      },
      expectUpload: async (req: workspaces.ExpectUploadRequest) => {
        await w.expectUpload(blobRefOf(req.blobRef));
        return {};
      },
      commitFile: async (req: workspaces.CommitFileRequest) =>
        toFile(
          await w.commitFile(...ids(req), {
            path: req.path,
            size: sizeOf(req.size, ["size"]),
            contentType: contentTypeOf(req.contentType, ["contentType"]),
            blobRef: blobRefOf(req.blobRef),
            ...uploadIdOf(req.uploadId),
          }),
        ),
      deleteFile: async (req: workspaces.FileRequest) => {
        await w.deleteFile(...ids(req), req.path);
        return {};
      },
      getUsage: async (req: workspaces.GetWorkspaceRequest) => w.usage(...ids(req)),
    },
    log,
  );
}
