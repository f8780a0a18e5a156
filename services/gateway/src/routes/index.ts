/**
 * Every HTTP route of the gateway, one line each. To add a route: write its file (one route per file, named
 * `<name>.<method>.ts`, exporting `route = defineRoute({...})`) and re-export it here under a unique name.
 * The router, request validation, auth and the OpenAPI document all read this list.
 */
export { route as healthz } from "./meta/healthz.get";
export { route as openApiDocument } from "./meta/openapi.get";
export { route as docsPage } from "./meta/docs.get";
export { route as docsAsset } from "./meta/docs-asset.get";
export { v4Route as v4OpenApiDocument } from "./meta/openapi.get";
export { v4Route as v4DocsPage } from "./meta/docs.get";
export { v4Route as v4DocsAsset } from "./meta/docs-asset.get";
export { route as blob } from "./blobs/get.get";
export { route as sessionLiveView } from "./live/session-live.get";

export { route as v3ListSessions } from "./v3/sessions/list.get";
export { route as v3CreateSession } from "./v3/sessions/create.post";
export { route as v3GetSession } from "./v3/sessions/get.get";
export { route as v3StopSession } from "./v3/sessions/stop.post";
export { route as v3DeleteSession } from "./v3/sessions/delete.delete";
export { route as v3ListSessionMessages } from "./v3/sessions/messages.get";
export { route as v3GetAccountBilling } from "./v3/billing/account.get";

export { route as v4CreateRun } from "./v4/runs/create.post";
export { route as v4ListRuns } from "./v4/runs/list.get";
export { route as v4GetRun } from "./v4/runs/get.get";
export { route as v4GetRunStatus } from "./v4/runs/status.get";
export { route as v4ListRunAttachments } from "./v4/runs/attachments.get";
export { route as v4GetRunEvents } from "./v4/runs/events.get";
export { route as v4CancelRun } from "./v4/runs/cancel.post";
export { route as v4ListSessions } from "./v4/sessions/list.get";
export { route as v4GetSession } from "./v4/sessions/get.get";
export { route as v4QueueMessage } from "./v4/sessions/queue.post";
export { route as v4ListQueue } from "./v4/sessions/queue.get";
export { route as v4GetQueuedMessage } from "./v4/sessions/queue-message.get";
export { route as v4CancelQueuedMessage } from "./v4/sessions/queue-message.delete";
export { route as v4PurgeSession } from "./v4/sessions/purge.post";
export { route as v4CreateWebhook } from "./v4/webhooks/create.post";
export { route as v4ListWebhooks } from "./v4/webhooks/list.get";
export { route as v4UpdateWebhook } from "./v4/webhooks/update.patch";
export { route as v4DeleteWebhook } from "./v4/webhooks/delete.delete";
export { route as v4ListWebhookDeliveries } from "./v4/webhooks/deliveries.get";
export { route as v4RotateWebhookSecret } from "./v4/webhooks/rotate-secret.post";
export { route as v4ResendWebhookDelivery } from "./v4/webhooks/resend.post";

export { route as v4CreateBrowser } from "./v4/browsers/create.post";
export { route as v4ListBrowsers } from "./v4/browsers/list.get";
export { route as v4GetBrowser } from "./v4/browsers/get.get";
export { route as v4UpdateBrowser } from "./v4/browsers/update.patch";
export { route as v4ListBrowserDownloads } from "./v4/browsers/downloads.get";
export { route as v3CreateBrowser } from "./v3/browsers/create.post";
export { route as v3ListBrowsers } from "./v3/browsers/list.get";
export { route as v3GetBrowser } from "./v3/browsers/get.get";
export { route as v3UpdateBrowser } from "./v3/browsers/update.patch";
export { route as v3ListBrowserDownloads } from "./v3/browsers/downloads.get";
export { route as v4CreateProfile } from "./v4/profiles/create.post";
export { route as v4ListProfiles } from "./v4/profiles/list.get";
export { route as v4GetProfile } from "./v4/profiles/get.get";
export { route as v4UpdateProfile } from "./v4/profiles/update.patch";
export { route as v4DeleteProfile } from "./v4/profiles/delete.delete";
export { route as v3CreateProfile } from "./v3/profiles/create.post";
export { route as v3ListProfiles } from "./v3/profiles/list.get";
export { route as v3GetProfile } from "./v3/profiles/get.get";
export { route as v3UpdateProfile } from "./v3/profiles/update.patch";
export { route as v3DeleteProfile } from "./v3/profiles/delete.delete";
export { route as v3CreateWorkspace } from "./v3/workspaces/create.post";
export { route as v3ListWorkspaces } from "./v3/workspaces/list.get";
export { route as v3GetWorkspace } from "./v3/workspaces/get.get";
export { route as v3UpdateWorkspace } from "./v3/workspaces/update.patch";
export { route as v3DeleteWorkspace } from "./v3/workspaces/delete.delete";
export { route as v3ListWorkspaceFiles } from "./v3/workspaces/files.get";
export { route as v3UploadWorkspaceFiles } from "./v3/workspaces/files-upload.post";
export { route as v3DeleteWorkspaceFile } from "./v3/workspaces/files.delete";
export { route as v3WorkspaceSize } from "./v3/workspaces/size.get";
export { route as v4CreateWorkspace } from "./v4/workspaces/create.post";
export { route as v4GetWorkspace } from "./v4/workspaces/get.get";
export { route as v4ListWorkspaceFiles } from "./v4/workspaces/files.get";
export { route as v4UploadWorkspaceFiles } from "./v4/workspaces/files-upload.post";
export { route as v4UpdateWorkspace } from "./v4/workspaces/update.patch";
export { route as v4DeleteWorkspace } from "./v4/workspaces/delete.delete";
export { route as v4DeleteWorkspaceFile } from "./v4/workspaces/files.delete";
export { route as v4WorkspaceSize } from "./v4/workspaces/size.get";
export { route as workspaceUpload } from "./uploads/put.put";
