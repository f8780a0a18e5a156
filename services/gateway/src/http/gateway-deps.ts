import type { BlobStore, BlobUrlSigner, UploadUrlSigner } from "@bas/blobs";
import type { ModelCatalog } from "@bas/models";
import type { billing, browserPool, runs, sessions, webhooks, workspaces } from "@bas/proto";
import type { Logger, PromiseClient } from "@bas/service-kit";
import type { BrowserCapacityCheck } from "../app/browser-capacity-check";
import type { CreditCheck } from "../app/credit-check";
import type { HealthReport } from "../app/health";
import type { ModelRouteCheck } from "../app/model-route-check";
import type { OwnKeyCheck } from "../app/own-key-check";
import type { ProjectStore } from "../app/project-store";
import type { ApiVersion } from "./api-versions";
import type { ChangeNotices } from "../app/change-notices";
import type { ReadCache } from "../app/read-cache";

/**
 * Everything a route handler may use, built once in `service.ts`. A client whose address is not configured still
 * exists: its calls fail with UNAVAILABLE, which the error middleware answers with 503.
 */
export interface GatewayDeps {
  sessions: PromiseClient<InstanceType<typeof sessions.SessionsClient>>;
  runs: PromiseClient<InstanceType<typeof runs.RunsClient>>;
  webhooks: PromiseClient<InstanceType<typeof webhooks.WebhooksClient>>;
  workspaces: PromiseClient<InstanceType<typeof workspaces.WorkspacesClient>>;
  /** Wakes event streams (SSE) when the sessions service committed news of a session. */
  changeNotices: ChangeNotices;
  browserPool: PromiseClient<InstanceType<typeof browserPool.BrowserPoolClient>>;
  /** How many browser-pool replicas `browserPool` reaches (BROWSER_POOL_REPLICAS): a create tries up to that many. */
  browserPoolReplicas: number;
  billing: PromiseClient<InstanceType<typeof billing.BillingClient>>;
  /** A project by id or name (its API keys' owner). */
  findProject: ProjectStore["findProject"];
  /** Requests a project may make per rate-limit window (RATE_LIMIT_REQUESTS); 0 = no limit. */
  rateLimitRequests: number;
  /** Throws `insufficient_credit` (402) when the project may not start more work. */
  requireCredit: CreditCheck;
  /** Before a new session: throws `limit_exceeded` (429) when the project's browser quota is already used. */
  requireBrowserCapacity: BrowserCapacityCheck;
  /** With `use_own_key`: throws `bad_request` (400) when the project stored no key for the model's provider. */
  requireOwnKey: OwnKeyCheck;
  requireModelRoute: ModelRouteCheck;
  /** Single-session reads, invalidated by the sessions service's change notices. */
  sessionCache: ReadCache<sessions.Session>;
  /** Run status polls, invalidated by the change notices of the run's session. */
  runStatusCache: ReadCache<string>;
  blobs: BlobStore;
  urls: BlobUrlSigner;
  /** Presigned PUT URLs of workspace uploads. */
  uploads: UploadUrlSigner;
  models: ModelCatalog;
  /** The gateway's public base URL (no trailing slash). */
  publicUrl: string;
  health(): Promise<HealthReport>;
  /** The generated OpenAPI document of one API version (its routes). */
  openApiDocument(version: ApiVersion): object;
  log: Logger;
}
