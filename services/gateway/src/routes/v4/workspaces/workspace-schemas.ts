import type { workspaces } from "@bas/proto";
import { z } from "zod";
import { DateTime, queryBool, queryInt, Uuid } from "../../../schemas/common";

/** Largest file one presigned upload may carry (the official v4 document's bound). */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

const Name = z.string().max(100).nullable().optional().describe("A name for the workspace.");

export const WorkspaceCreateRequest = z.object({ name: Name }).meta({ id: "WorkspaceCreateRequest" });
export const WorkspaceUpdateRequest = z.object({ name: Name }).meta({ id: "WorkspaceUpdateRequest" });

export const WorkspaceListQuery = z.object({
  pageNumber: queryInt({ min: 1, default: 1, description: "Page number, 1-indexed." }),
  pageSize: queryInt({ min: 1, max: 100, default: 10, description: "Workspaces per page." }),
});

/** v3's view of a workspace. */
export const WorkspaceView = z
  .object({ id: Uuid, name: z.string().nullable(), createdAt: DateTime, updatedAt: DateTime })
  .meta({ id: "WorkspaceView" });

/** v4's view of a workspace. */
export const WorkspaceInfo = z
  .object({ id: Uuid, name: z.string().nullable(), archived: z.boolean(), createdAt: DateTime, updatedAt: DateTime })
  .meta({ id: "WorkspaceInfo" });

export const WorkspaceList = z
  .object({ items: z.array(WorkspaceView), totalItems: z.int(), pageNumber: z.int(), pageSize: z.int() })
  .meta({ id: "WorkspaceListResponse" });

export const FileListQuery = z.object({
  prefix: z.string().max(1024).default("").describe('Only paths that start with this, e.g. "reports/".'),
  limit: queryInt({ min: 1, max: 100, default: 50, description: "Files per page." }),
  cursor: z.string().max(2000).optional().describe("The nextCursor of the previous page."),
  includeUrls: queryBool({ default: false, description: "Add a presigned download URL to each file." }),
  contentDisposition: z
    .literal("attachment")
    .optional()
    .describe(
      "With includeUrls: URLs whose answer makes a browser save the file (under its name) instead of showing it.",
    ),
});

/** v3's listing can also stop at one level, as a file browser shows a folder. */
export const FileListQueryV3 = FileListQuery.extend({
  shallow: queryBool({
    default: false,
    description: "Only the files right under the prefix; the folders below it are listed in `folders` instead.",
  }),
});

export const FileInfo = z
  .object({
    path: z.string().describe("File path relative to the workspace root."),
    size: z.int().describe("File size in bytes."),
    lastModified: DateTime,
    url: z.string().nullable().optional().describe("Presigned download URL; only with `includeUrls=true`."),
  })
  .meta({ id: "FileInfo" });

const FileListPage = {
  files: z.array(FileInfo),
  nextCursor: z.string().nullable(),
  hasMore: z.boolean(),
};

export const FileList = z
  .object({
    ...FileListPage,
    folders: z
      .array(z.string())
      .describe(
        'With shallow: the folders right under the prefix, each its path with a trailing "/" (e.g. "reports/2026/"), ' +
          "to list next as the prefix; paged with the files, in path order. Empty otherwise.",
      ),
  })
  .meta({ id: "FileListResponse" });

export const WorkspaceFileList = z.object(FileListPage).meta({ id: "WorkspaceFileListResponse" });

const FileName = z
  .string()
  .min(1)
  .max(255)
  .describe('File name, e.g. "data.csv" (may include folders: "in/data.csv").');
const ContentType = z
  .string()
  .max(255)
  .regex(/^[\x21-\x7e][\x20-\x7e]*$/, { message: "contentType must be a MIME type such as text/csv" })
  .default("application/octet-stream")
  .describe('MIME type, e.g. "text/csv"; the upload must send it as its Content-Type.');
const Size = z.int().min(1).max(MAX_UPLOAD_BYTES).describe("Exact size in bytes; the presigned URL is pinned to it.");

export const FileUploadRequest = z
  .object({
    files: z
      .array(
        z.object({
          name: FileName,
          contentType: ContentType,
          // Optional in v3's document, but a workspace upload is pinned to its size: a missing one is a 422.
          size: Size.nullable().optional(),
        }),
      )
      .min(1)
      .max(10),
  })
  .meta({ id: "FileUploadRequest" });

export const FileUploadQuery = z.object({
  prefix: z.string().max(1024).default("").describe('Folder to upload into, e.g. "uploads/".'),
});

export const FileUploadResponse = z
  .object({ files: z.array(z.object({ name: z.string(), uploadUrl: z.string(), path: z.string() })) })
  .meta({ id: "FileUploadResponse" });

export const WorkspaceFileUploadRequest = z
  .object({
    files: z
      .array(z.object({ name: FileName, contentType: ContentType, size: Size }))
      .min(1)
      .max(10),
    allowOverrides: z
      .boolean()
      .default(true)
      .describe("When false, a 409 (and no upload URL) if any file would replace one the workspace has."),
  })
  .meta({ id: "WorkspaceFileUploadRequest" });

export const WorkspaceFileUploadResponse = z
  .object({
    files: z.array(
      z.object({
        id: Uuid,
        name: z.string(),
        storedName: z.string(),
        path: z.string(),
        willOverride: z.boolean(),
        uploadUrl: z.string(),
      }),
    ),
  })
  .meta({ id: "WorkspaceFileUploadResponse" });

export const FileDeleteQuery = z.object({ path: z.string().min(1).max(1024).describe("Relative file path to delete") });

export const WorkspaceUsageView = z.object({ usedBytes: z.int(), maxBytes: z.int() }).meta({ id: "WorkspaceUsage" });

const iso = (date: Date | undefined) => (date ?? new Date(0)).toISOString();

export const toWorkspaceView = (w: workspaces.Workspace): z.infer<typeof WorkspaceView> => ({
  id: w.id,
  name: w.name ?? null,
  createdAt: iso(w.createdAt),
  updatedAt: iso(w.updatedAt),
});

export const toWorkspaceInfo = (w: workspaces.Workspace): z.infer<typeof WorkspaceInfo> => ({
  ...toWorkspaceView(w),
  archived: false,
});
