import { onReplicaWithRoom } from "@bas/service-kit";
import { customProxyOf } from "../../../schemas/custom-proxy";
import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import {
  BrowserDownloadList,
  BrowserDownloadsQuery,
  BrowserListQuery,
  BrowserSessionList,
  BrowserSessionView,
  CreateBrowserRequest,
  UpdateBrowserRequest,
} from "./browser-schemas";
import { toBrowserSessionView } from "./browser-view";

/** The browsers API is the same under /api/v3 and /api/v4; each route file picks its version. */
type Version = "v3" | "v4";
const suffix = (v: Version) => (v === "v4" ? "" : "V3");
const tags = ["Browsers"];

export const createBrowserRoute = (v: Version) =>
  defineRoute({
    method: "post",
    path: `/api/${v}/browsers`,
    auth: "api-key",
    operationId: `createBrowser${suffix(v)}`,
    summary: "Start a browser to control over CDP",
    tags,
    request: { body: CreateBrowserRequest },
    // 201 as the hosted service's document has it.
    responses: { 201: { description: "The running browser, with its cdpUrl", schema: BrowserSessionView } },
    errors: [402, 404, 429, 503],
    async handler({ body, project, signal }, deps) {
      await deps.requireCredit(project.projectId);
      // A replica at its maximum refuses; another may have room.
      const create = () =>
        deps.browserPool.createBrowser(
          {
            projectId: project.projectId,
            settings: {
              proxyCountryCode: body.proxyCountryCode ?? undefined,
              profileId: body.profileId ?? undefined,
              screenWidth: body.browserScreenWidth ?? undefined,
              screenHeight: body.browserScreenHeight ?? undefined,
              record: body.enableRecording,
              customProxy: customProxyOf(body.customProxy),
              allowedDomains: body.allowedDomains ?? [],
            },
            timeoutMinutes: body.timeout,
            metadata: body.metadata ?? {},
          },
          { signal },
        );
      const browser = await onReplicaWithRoom(create, deps.browserPoolReplicas);
      return { status: 201, body: toBrowserSessionView(browser, deps.urls.sign) };
    },
  });

export const listBrowsersRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/browsers`,
    auth: "api-key",
    operationId: `listBrowsers${suffix(v)}`,
    summary: "List the project's browsers, newest first",
    tags,
    request: { query: BrowserListQuery },
    responses: { 200: { description: "One page of browsers", schema: BrowserSessionList } },
    async handler({ query, project, signal }, deps) {
      const page = await deps.browserPool.listBrowsers(
        {
          projectId: project.projectId,
          pageNumber: query.pageNumber,
          pageSize: query.pageSize,
          status: query.filterBy,
          sessionId: query.agentSessionId,
        },
        { signal },
      );
      return {
        body: {
          items: page.items.map((b) => toBrowserSessionView(b, deps.urls.sign)),
          totalItems: page.totalItems,
          pageNumber: query.pageNumber,
          pageSize: query.pageSize,
        },
      };
    },
  });

export const getBrowserRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/browsers/{id}`,
    auth: "api-key",
    operationId: `getBrowser${suffix(v)}`,
    summary: "Read one browser, with its recording as a presigned URL (valid 5 minutes) once it is stored",
    tags,
    request: { params: IdParams },
    responses: { 200: { description: "The browser", schema: BrowserSessionView } },
    errors: [404],
    async handler({ params, project, signal }, deps) {
      const browser = await deps.browserPool.getBrowser(
        { projectId: project.projectId, browserId: params.id },
        { signal },
      );
      return { body: toBrowserSessionView(browser, deps.urls.sign) };
    },
  });

export const updateBrowserRoute = (v: Version) =>
  defineRoute({
    method: "patch",
    path: `/api/${v}/browsers/{id}`,
    auth: "api-key",
    operationId: `updateBrowser${suffix(v)}`,
    summary: "Stop the browser (the only action); closing a CDP connection never does",
    tags,
    request: { params: IdParams, body: UpdateBrowserRequest },
    responses: { 200: { description: "The browser after the stop", schema: BrowserSessionView } },
    errors: [404],
    async handler({ params, project }, deps) {
      // Not tied to the caller's connection: a stop that has begun is seen through even if the caller hangs up.
      const browser = await deps.browserPool.stopBrowser({ projectId: project.projectId, browserId: params.id });
      return { body: toBrowserSessionView(browser, deps.urls.sign) };
    },
  });

export const listDownloadsRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/browsers/{id}/downloads`,
    auth: "api-key",
    operationId: `listBrowserDownloads${suffix(v)}`,
    summary: "The files the browser downloaded, oldest first",
    tags,
    request: { params: IdParams, query: BrowserDownloadsQuery },
    responses: { 200: { description: "One page of downloaded files", schema: BrowserDownloadList } },
    errors: [404],
    async handler({ params, query, project, signal }, deps) {
      const page = await deps.browserPool.listDownloads(
        { projectId: project.projectId, browserId: params.id, limit: query.limit, cursor: query.cursor },
        { signal },
      );
      return {
        body: {
          files: page.items.map((d) => ({
            path: d.fileName,
            size: Number(d.size),
            lastModified: (d.downloadedAt ?? new Date(0)).toISOString(),
            url: query.includeUrls ? deps.urls.sign(d.ref) : null,
          })),
          nextCursor: page.nextCursor ?? null,
          hasMore: page.hasMore,
        },
      };
    },
  });
