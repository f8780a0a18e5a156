import type { ServerUnaryCall } from "@grpc/grpc-js";
import type { browserPool, sessions } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import { InvalidArgumentError, NotFoundError } from "@bas/errors";
import type { BrowserPool } from "../../app/browser-pool";
import type { BrowserReadModel, ProfileView } from "../../app/ports";
import type { Profiles } from "../../app/profiles";
import type { LaunchHealthReport } from "../../app/launch-health";
import type { SessionBrowsers } from "../../app/session-browsers";
import type { BrowserSettingsInput } from "../../domain/browser-settings";
import type { BrowserView } from "../../domain/browser-view";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_PAGE_SIZE = 100;
const DEFAULT_DOWNLOADS_PAGE = 50;

export function toProtoBrowser(view: BrowserView): browserPool.Browser {
  return {
    id: view.id,
    projectId: view.projectId,
    status: view.status,
    liveUrl: view.liveUrl ?? undefined,
    cdpUrl: view.cdpUrl,
    timeoutAt: view.timeoutAt,
    startedAt: view.startedAt,
    finishedAt: view.finishedAt ?? undefined,
    proxyUsedMb: view.proxyUsedMb,
    proxyCost: view.proxyCost,
    browserCost: view.browserCost,
    agentSessionId: view.agentSessionId ?? undefined,
    recordingRef: view.recordingRef ?? undefined,
    metadata: view.metadata,
    stopReason: view.stopReason ?? undefined,
    settings: {
      proxyCountryCode: view.settings.proxyCountryCode ?? undefined,
      profileId: view.settings.profileId ?? undefined,
      screenWidth: view.settings.screenWidth,
      screenHeight: view.settings.screenHeight,
      record: view.settings.record,
      customProxy: view.settings.customProxy ?? undefined,
      // Browsers recorded before allowedDomains existed have none.
      allowedDomains: view.settings.allowedDomains ?? [],
    },
  };
}

function toProtoProfile(view: ProfileView): browserPool.Profile {
  return {
    id: view.id,
    projectId: view.projectId,
    name: view.name ?? undefined,
    userId: view.userId ?? undefined,
    lastUsedAt: view.lastUsedAt ?? undefined,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
    cookieDomains: view.cookieDomains,
  };
}

/** A profile id that is not a UUID names no profile. */
function profileIdOf(value: string): string {
  if (!UUID.test(value)) throw new NotFoundError("Profile not found");
  return value.toLowerCase();
}

/** Proto settings: an absent proxy country means no proxy (the gateway fills the REST default "us"). */
function settingsOf(settings: sessions.BrowserSettings | undefined): BrowserSettingsInput {
  return {
    proxyCountryCode: settings?.proxyCountryCode ?? null,
    profileId: settings?.profileId ?? null,
    screenWidth: settings?.screenWidth ?? null,
    screenHeight: settings?.screenHeight ?? null,
    record: settings?.record ?? false,
    customProxy: settings?.customProxy ?? null,
    allowedDomains: settings?.allowedDomains ?? null,
  };
}

function required(value: string, field: string): string {
  if (!value) throw new InvalidArgumentError(`${field} is required`, { field: [field] });
  return value;
}

/** A browser id that is not a UUID names no browser. */
function browserIdOf(value: string): string {
  if (!UUID.test(value)) throw new NotFoundError("Browser not found");
  return value.toLowerCase();
}

/** The shown status a list may be narrowed to (the gateway's `filterBy`). */
function listedStatusOf(value: string): "active" | "stopped" {
  if (value === "active" || value === "stopped") return value;
  throw new InvalidArgumentError("filterBy must be active or stopped", { field: ["query", "filterBy"] });
}

/** Whether a call's client has stopped waiting: it cancelled the call, or the call's deadline has passed. */
function callerGoneOf(call: ServerUnaryCall<unknown, unknown>): () => boolean {
  const raw = call.getDeadline();
  const deadline = raw instanceof Date ? raw.getTime() : Number(raw);
  return () => call.cancelled || Date.now() >= deadline;
}

export interface BrowserPoolServerDeps {
  pool: BrowserPool;
  sessions: SessionBrowsers;
  readModel: Pick<BrowserReadModel, "find" | "list" | "downloads">;
  profiles: Profiles;
  /** Whether this node can launch browsers (for the gateway's /healthz); never launches one. */
  launchHealth: () => LaunchHealthReport;
  log?: HandlerLog;
}

/** The `BrowserPool` gRPC service: the gateway's browsers API and the runner's acquire/release. */
export function browserPoolServer(deps: BrowserPoolServerDeps): browserPool.BrowserPoolServer {
  const { pool, sessions, readModel, profiles } = deps;
  return unaryService(
    {
      createBrowser: async (req: browserPool.CreateBrowserRequest, call: ServerUnaryCall<unknown, unknown>) =>
        toProtoBrowser(
          (
            await pool.create({
              projectId: required(req.projectId, "project_id"),
              settings: settingsOf(req.settings),
              timeoutMinutes: req.timeoutMinutes,
              metadata: req.metadata,
              callerGone: callerGoneOf(call),
            })
          ).view,
        ),
      getBrowser: async (req: browserPool.GetBrowserRequest) => {
        const id = browserIdOf(req.browserId);
        await pool.caughtUp(id);
        const view = await readModel.find(required(req.projectId, "project_id"), id);
        if (!view) throw new NotFoundError("Browser not found");
        return toProtoBrowser(view);
      },
      listBrowsers: async (req: browserPool.ListBrowsersRequest): Promise<browserPool.ListBrowsersResponse> => {
        const number = req.pageNumber || 1;
        const size = req.pageSize || 10;
        if (number < 1)
          throw new InvalidArgumentError("pageNumber must be at least 1", { field: ["query", "pageNumber"] });
        if (size < 1 || size > MAX_PAGE_SIZE) {
          throw new InvalidArgumentError(`pageSize must be from 1 to ${MAX_PAGE_SIZE}`, {
            field: ["query", "pageSize"],
          });
        }
        await pool.caughtUp();
        const filter = { ...(req.status ? { status: listedStatusOf(req.status) } : {}), sessionId: req.sessionId };
        const { views, total } = await readModel.list(required(req.projectId, "project_id"), { number, size }, filter);
        return {
          items: views.map(toProtoBrowser),
          totalItems: total,
          pageNumber: number,
          pageSize: size,
        };
      },
      stopBrowser: async (req: browserPool.StopBrowserRequest) => {
        const projectId = required(req.projectId, "project_id");
        const id = browserIdOf(req.browserId);
        // The browser as the stop left it; the metered traffic and costs so far from the read model, which has them
        // (the aggregate does not), read as it is now, alongside the stop rather than after it.
        const [stopped, known] = await Promise.all([
          pool.stopNow(id, { reason: "caller", projectId }),
          readModel.find(projectId, id),
        ]);
        const costs = known && {
          proxyUsedMb: known.proxyUsedMb,
          proxyCost: known.proxyCost,
          browserCost: known.browserCost,
        };
        return toProtoBrowser({ ...stopped, ...costs });
      },
      acquireBrowser: async (req: browserPool.AcquireBrowserRequest): Promise<browserPool.AcquiredBrowser> => {
        const acquired = await sessions.acquire({
          projectId: required(req.projectId, "project_id"),
          sessionId: required(req.sessionId, "session_id"),
          settings: settingsOf(req.settings),
          reopened: req.reopened === true,
        });
        return { browser: toProtoBrowser(acquired.view), internalCdpUrl: acquired.internalCdpUrl };
      },
      releaseBrowser: async (req: browserPool.ReleaseBrowserRequest) =>
        toProtoBrowser(
          await sessions.release(required(req.projectId, "project_id"), required(req.sessionId, "session_id")),
        ),
      requireBrowserCapacity: async (req: browserPool.RequireBrowserCapacityRequest) =>
        pool.capacity(required(req.projectId, "project_id")),
      getLaunchHealth: async (_req: browserPool.GetLaunchHealthRequest): Promise<browserPool.LaunchHealth> =>
        deps.launchHealth(),
      createProfile: async (req: browserPool.CreateProfileRequest) =>
        toProtoProfile(
          await profiles.create(required(req.projectId, "project_id"), { name: req.name, userId: req.userId }),
        ),
      getProfile: async (req: browserPool.GetProfileRequest) =>
        toProtoProfile(await profiles.get(required(req.projectId, "project_id"), profileIdOf(req.profileId))),
      listProfiles: async (req: browserPool.ListProfilesRequest): Promise<browserPool.ListProfilesResponse> => {
        const number = req.pageNumber || 1;
        const size = req.pageSize || 10;
        const projectId = required(req.projectId, "project_id");
        const { views, total } = await profiles.list(projectId, { number, size }, req.query);
        return { items: views.map(toProtoProfile), totalItems: total, pageNumber: number, pageSize: size };
      },
      updateProfile: async (req: browserPool.UpdateProfileRequest) => {
        const fields = {
          ...(req.fields.includes("name") ? { name: req.name ?? null } : {}),
          ...(req.fields.includes("user_id") ? { userId: req.userId ?? null } : {}),
        };
        const projectId = required(req.projectId, "project_id");
        return toProtoProfile(await profiles.update(projectId, profileIdOf(req.profileId), fields));
      },
      deleteProfile: async (req: browserPool.GetProfileRequest) => {
        await profiles.delete(required(req.projectId, "project_id"), profileIdOf(req.profileId));
        return {};
      },
      listDownloads: async (req: browserPool.ListDownloadsRequest): Promise<browserPool.ListDownloadsResponse> => {
        const limit = req.limit || DEFAULT_DOWNLOADS_PAGE;
        if (limit < 1 || limit > MAX_PAGE_SIZE) {
          throw new InvalidArgumentError(`limit must be from 1 to ${MAX_PAGE_SIZE}`, { field: ["query", "limit"] });
        }
        const after = req.cursor || undefined;
        if (after !== undefined && !/^\d{1,18}$/.test(after)) {
          throw new InvalidArgumentError("cursor is not one this list gave (use nextCursor)", {
            field: ["query", "cursor"],
          });
        }
        const browserId = browserIdOf(req.browserId);
        if (!(await readModel.find(required(req.projectId, "project_id"), browserId))) {
          throw new NotFoundError("Browser not found");
        }
        const page = await readModel.downloads(browserId, { limit, after });
        return {
          items: page.items,
          nextCursor: page.nextCursor ?? undefined,
          hasMore: page.nextCursor !== null,
        };
      },
    },
    deps.log,
  );
}
