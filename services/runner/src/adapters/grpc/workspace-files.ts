import { status } from "@grpc/grpc-js";
import { type BlobStore, newBlobRef } from "@bas/blobs";
import { workspaces } from "@bas/proto";
import { ClientError, connectClient, type PromiseClient, retry } from "@bas/service-kit";
import { ToolError } from "../../app/browser-errors";
import type { OutagePolicy } from "../../app/ports";
import type { WorkspaceFiles } from "../../app/workspace-tools";

type Client = PromiseClient<workspaces.WorkspacesClient>;

export interface WorkspaceConnection {
  /** The files of one workspace of a project. */
  files(projectId: string, workspaceId: string): WorkspaceFiles;
  close(): void;
}

/** What the sessions service refused, worded for the model (a bad path, a full workspace, a deleted one). */
function refusal(err: unknown): never {
  if (err instanceof ClientError) {
    if (err.code === status.INVALID_ARGUMENT || err.kind === "quota_exceeded") throw new ToolError(err.details);
    if (err.code === status.NOT_FOUND) throw new ToolError(`${err.details} (it may have been deleted).`);
  }
  throw err;
}

/**
 * The workspaces of the sessions service (the catalogue and the quota) and the blob store (the bytes). While the
 * sessions service is away, calls wait with backoff up to the outage grace, as reports do.
 */
export function connectWorkspaceFiles(address: string, blobs: BlobStore, outage: OutagePolicy): WorkspaceConnection {
  const client: Client = connectClient(workspaces.WorkspacesClient, address, 15_000);
  const call = <T>(fn: () => Promise<T>) =>
    retry(fn, {
      graceMs: outage.graceMs,
      onRetry: (err, { waitedMs }) => outage.onWait?.("sessions", err, waitedMs),
    }).catch(refusal);

  return {
    files(projectId, workspaceId) {
      const ids = { projectId, workspaceId };
      return {
        async list(prefix, limit) {
          const page = await call(() => client.listFiles({ ...ids, prefix, limit, shallow: false }));
          return { files: page.files, more: page.nextCursor !== undefined };
        },
        async read(path) {
          let file: workspaces.WorkspaceFile;
          try {
            file = await retry(() => client.getFile({ ...ids, path }), { graceMs: outage.graceMs });
          } catch (err) {
            if (err instanceof ClientError && err.code === status.NOT_FOUND) return null;
            return refusal(err);
          }
          const stored = await blobs.getBytes(file.blobRef);
          return stored && { data: stored.data, contentType: file.contentType };
        },
        async write(path, data, contentType) {
          const blobRef = newBlobRef(contentType, "workspace");
          // Told first, the sessions service sweeps the blob should the commit never come (this runner dies first).
          await call(() => client.expectUpload({ blobRef }));
          await blobs.put(data, { contentType, ref: blobRef });
          try {
            const file = await call(() => client.commitFile({ ...ids, path, blobRef, size: data.length, contentType }));
            return file.path;
          } catch (err) {
            await blobs.delete(blobRef).catch(() => undefined);
            throw err;
          }
        },
      };
    },
    close: () => client.close(),
  };
}
