import { randomUUID } from "node:crypto";
import { posix } from "node:path";
import { InvalidArgumentError } from "@bas/errors";
import type { GatewayDeps } from "../../../http/gateway-deps";
import { HttpError } from "../../../http/http-error";
import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import {
  FileDeleteQuery,
  FileList,
  FileListQuery,
  FileListQueryV3,
  FileUploadQuery,
  FileUploadRequest,
  FileUploadResponse,
  toWorkspaceInfo,
  toWorkspaceView,
  WorkspaceCreateRequest,
  WorkspaceFileList,
  WorkspaceFileUploadRequest,
  WorkspaceFileUploadResponse,
  WorkspaceInfo,
  WorkspaceList,
  WorkspaceListQuery,
  WorkspaceUpdateRequest,
  WorkspaceUsageView,
  WorkspaceView,
} from "./workspace-schemas";

/** Most of the workspaces API is alike under /api/v3 and /api/v4; each route file picks its version. */
type Version = "v3" | "v4";
const suffix = (v: Version) => (v === "v4" ? "" : "V3");
const tags = ["Workspaces"];
const viewOf = (v: Version) => (v === "v4" ? toWorkspaceInfo : toWorkspaceView);

export const createWorkspaceRoute = (v: Version) =>
  defineRoute({
    method: "post",
    path: `/api/${v}/workspaces`,
    auth: "api-key",
    operationId: `createWorkspace${suffix(v)}`,
    summary: "Create a workspace: files that sessions and runs attached to it can read and write",
    tags,
    request: { body: WorkspaceCreateRequest },
    responses:
      v === "v4"
        ? { 200: { description: "The new workspace", schema: WorkspaceInfo } }
        : { 201: { description: "The new workspace", schema: WorkspaceView } },
    // 402: the project keeps as many workspaces as it may (MAX_WORKSPACES_PER_PROJECT).
    errors: [402],
    async handler({ body, project, signal }, deps) {
      const created = await deps.workspaces.createWorkspace(
        { projectId: project.projectId, name: body?.name ?? undefined },
        { signal },
      );
      return { status: v === "v4" ? 200 : 201, body: viewOf(v)(created) };
    },
  });

export const getWorkspaceRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/workspaces/{id}`,
    auth: "api-key",
    operationId: `getWorkspace${suffix(v)}`,
    summary: "Read one workspace",
    tags,
    request: { params: IdParams },
    responses: { 200: { description: "The workspace", schema: v === "v4" ? WorkspaceInfo : WorkspaceView } },
    errors: [404],
    async handler({ params, project, signal }, deps) {
      const found = await deps.workspaces.getWorkspace(
        { projectId: project.projectId, workspaceId: params.id },
        { signal },
      );
      return { body: viewOf(v)(found) };
    },
  });

export const listFilesRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/workspaces/{id}/files`,
    auth: "api-key",
    operationId: `listWorkspaceFiles${suffix(v)}`,
    summary: "The workspace's files by path, a page at a time",
    tags,
    request: { params: IdParams, query: v === "v3" ? FileListQueryV3 : FileListQuery },
    responses: { 200: { description: "One page of files", schema: v === "v3" ? FileList : WorkspaceFileList } },
    errors: [404],
    async handler({ params, query, project, signal }, deps) {
      const shallow = "shallow" in query && query.shallow === true;
      const page = await deps.workspaces.listFiles(
        {
          projectId: project.projectId,
          workspaceId: params.id,
          prefix: query.prefix,
          limit: query.limit,
          cursor: query.cursor,
          shallow,
        },
        { signal },
      );
      return {
        body: {
          files: page.files.map((f) => ({
            path: f.path,
            size: f.size,
            lastModified: (f.lastModified ?? new Date(0)).toISOString(),
            url: query.includeUrls ? deps.urls.sign(f.blobRef, saveAs(f.path, query.contentDisposition)) : null,
          })),
          ...(v === "v3" ? { folders: page.folders } : {}),
          nextCursor: page.nextCursor ?? null,
          hasMore: page.nextCursor !== undefined,
        },
      };
    },
  });

/** The name a browser saves a file under (its path's last segment), when the caller asked for that. */
const saveAs = (path: string, disposition: "attachment" | undefined) =>
  disposition === "attachment" ? posix.basename(path) : undefined;

interface Upload {
  path: string;
  size: number;
  contentType: string;
  /** A v4 upload's id: the file records it, and a run attaches the file by it. */
  uploadId?: string;
}

/** Asks the sessions service where the files go and whether they fit, then signs one PUT URL per file. */
async function presign(
  deps: GatewayDeps,
  projectId: string,
  workspaceId: string,
  files: Upload[],
  signal: AbortSignal,
  { allowOverrides = true } = {},
) {
  const prepared = await deps.workspaces.prepareUploads({ projectId, workspaceId, files }, { signal });
  const replacing = prepared.files.filter((p) => p.willOverride).map((p) => p.path);
  if (!allowOverrides && replacing.length) {
    throw new HttpError(
      409,
      `The workspace already has ${replacing.join(", ")}; upload with allowOverrides true to replace, or delete first`,
    );
  }
  return prepared.files.map((p, i) => ({
    ...p,
    uploadUrl: deps.uploads.sign({ projectId, workspaceId, ...files[i], path: p.path }),
  }));
}

export const v3UploadRoute = defineRoute({
  method: "post",
  path: "/api/v3/workspaces/{id}/files/upload",
  auth: "api-key",
  operationId: "uploadWorkspaceFilesV3",
  summary: "Presigned PUT URLs for new files, each pinned to its declared size and content type (5 minutes)",
  tags,
  request: { params: IdParams, query: FileUploadQuery, body: FileUploadRequest },
  responses: { 200: { description: "One upload URL per file", schema: FileUploadResponse } },
  errors: [404, 413],
  async handler({ params, query, body, project, signal }, deps) {
    const folder = query.prefix ? `${query.prefix.replace(/\/+$/, "")}/` : "";
    const files = body.files.map((f, i) => {
      if (f.size == null) {
        throw new InvalidArgumentError("size is required for workspace uploads", {
          field: ["body", "files", i, "size"],
        });
      }
      return { path: `${folder}${f.name}`, size: f.size, contentType: f.contentType };
    });
    const prepared = await presign(deps, project.projectId, params.id, files, signal);
    return {
      body: {
        files: prepared.map((p, i) => ({ name: body.files[i].name, path: p.path, uploadUrl: p.uploadUrl })),
      },
    };
  },
});

/** v4 uploads land in `uploads/`, as the official document's example has it. */
const V4_UPLOAD_FOLDER = "uploads/";

export const v4UploadRoute = defineRoute({
  method: "post",
  path: "/api/v4/workspaces/{id}/files/upload",
  auth: "api-key",
  operationId: "uploadWorkspaceFiles",
  summary: "Presigned PUT URLs for new files in uploads/, each pinned to its declared size and content type",
  tags,
  request: { params: IdParams, body: WorkspaceFileUploadRequest },
  responses: { 200: { description: "One upload URL per file", schema: WorkspaceFileUploadResponse } },
  errors: [404, 409, 413],
  async handler({ params, body, project, signal }, deps) {
    const files = body.files.map((f) => ({
      path: `${V4_UPLOAD_FOLDER}${f.name}`,
      size: f.size,
      contentType: f.contentType,
      uploadId: randomUUID(),
    }));
    const prepared = await presign(deps, project.projectId, params.id, files, signal, {
      allowOverrides: body.allowOverrides,
    });
    return {
      body: {
        files: prepared.map((p, i) => ({
          id: files[i].uploadId,
          name: body.files[i].name,
          storedName: p.path.slice(V4_UPLOAD_FOLDER.length),
          path: p.path,
          willOverride: p.willOverride,
          uploadUrl: p.uploadUrl,
        })),
      },
    };
  },
});

export const listWorkspacesRoute = defineRoute({
  method: "get",
  path: "/api/v3/workspaces",
  auth: "api-key",
  operationId: "listWorkspacesV3",
  summary: "List the project's workspaces, newest first",
  tags,
  request: { query: WorkspaceListQuery },
  responses: { 200: { description: "One page of workspaces", schema: WorkspaceList } },
  async handler({ query, project, signal }, deps) {
    const page = await deps.workspaces.listWorkspaces(
      { projectId: project.projectId, pageNumber: query.pageNumber, pageSize: query.pageSize },
      { signal },
    );
    return {
      body: {
        items: page.items.map(toWorkspaceView),
        totalItems: page.totalItems,
        pageNumber: page.pageNumber,
        pageSize: page.pageSize,
      },
    };
  },
});

export const updateWorkspaceRoute = (v: Version) =>
  defineRoute({
    method: "patch",
    path: `/api/${v}/workspaces/{id}`,
    auth: "api-key",
    operationId: `updateWorkspace${suffix(v)}`,
    summary: "Rename a workspace (null clears the name)",
    tags,
    request: { params: IdParams, body: WorkspaceUpdateRequest },
    responses: { 200: { description: "The workspace", schema: v === "v4" ? WorkspaceInfo : WorkspaceView } },
    errors: [404],
    async handler({ params, body, project, signal }, deps) {
      const updated = await deps.workspaces.updateWorkspace(
        {
          projectId: project.projectId,
          workspaceId: params.id,
          name: body.name ?? undefined,
          fields: "name" in body ? ["name"] : [],
        },
        { signal },
      );
      return { body: viewOf(v)(updated) };
    },
  });

export const deleteWorkspaceRoute = (v: Version) =>
  defineRoute({
    method: "delete",
    path: `/api/${v}/workspaces/{id}`,
    auth: "api-key",
    operationId: `deleteWorkspace${suffix(v)}`,
    // The official v4 client calls this "archive"; here the workspace and its files go (a later read is a 404).
    summary: "Delete a workspace and all its files",
    tags,
    request: { params: IdParams },
    responses: { 204: { description: "Deleted" } },
    errors: [404],
    async handler({ params, project }, deps) {
      await deps.workspaces.deleteWorkspace({ projectId: project.projectId, workspaceId: params.id });
      return { status: 204 };
    },
  });

export const deleteFileRoute = (v: Version) =>
  defineRoute({
    method: "delete",
    path: `/api/${v}/workspaces/{id}/files`,
    auth: "api-key",
    operationId: `deleteWorkspaceFile${suffix(v)}`,
    summary: "Delete one file of the workspace (a path with no file is not an error)",
    tags,
    request: { params: IdParams, query: FileDeleteQuery },
    responses: { 204: { description: "Deleted" } },
    errors: [404],
    async handler({ params, query, project }, deps) {
      await deps.workspaces.deleteFile({ projectId: project.projectId, workspaceId: params.id, path: query.path });
      return { status: 204 };
    },
  });

export const workspaceSizeRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/workspaces/{id}/size`,
    auth: "api-key",
    operationId: `getWorkspaceSize${suffix(v)}`,
    summary: "How many bytes the workspace's files take, and its quota",
    tags,
    request: { params: IdParams },
    responses: { 200: { description: "Usage and quota", schema: WorkspaceUsageView } },
    errors: [404],
    async handler({ params, project, signal }, deps) {
      return {
        body: await deps.workspaces.getUsage({ projectId: project.projectId, workspaceId: params.id }, { signal }),
      };
    },
  });
