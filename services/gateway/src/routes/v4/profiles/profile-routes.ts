import { defineRoute } from "../../../http/route";
import { IdParams } from "../../../schemas/common";
import {
  ProfileCreateRequest,
  ProfileList,
  ProfileListQuery,
  ProfileUpdateRequest,
  ProfileView,
  toProfileView,
} from "./profile-schemas";

/** The profiles API is the same under /api/v3 and /api/v4; each route file picks its version. */
type Version = "v3" | "v4";
const suffix = (v: Version) => (v === "v4" ? "" : "V3");
const tags = ["Profiles"];

export const createProfileRoute = (v: Version) =>
  defineRoute({
    method: "post",
    path: `/api/${v}/profiles`,
    auth: "api-key",
    operationId: `createProfile${suffix(v)}`,
    summary: "Create a profile: browsers started with its id keep their cookies and storage in it",
    tags,
    request: { body: ProfileCreateRequest },
    responses: { 201: { description: "The new profile", schema: ProfileView } },
    // 402: the project keeps as many profiles as it may (MAX_PROFILES_PER_PROJECT), as the hosted service answers.
    errors: [402],
    async handler({ body, project, signal }, deps) {
      const profile = await deps.browserPool.createProfile(
        { projectId: project.projectId, name: body.name ?? undefined, userId: body.userId ?? undefined },
        { signal },
      );
      return { status: 201, body: toProfileView(profile) };
    },
  });

export const listProfilesRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/profiles`,
    auth: "api-key",
    operationId: `listProfiles${suffix(v)}`,
    summary: "List the project's profiles, newest first",
    tags,
    request: { query: ProfileListQuery },
    responses: { 200: { description: "One page of profiles", schema: ProfileList } },
    async handler({ query, project, signal }, deps) {
      const page = await deps.browserPool.listProfiles(
        { projectId: project.projectId, pageNumber: query.pageNumber, pageSize: query.pageSize, query: query.query },
        { signal },
      );
      return {
        body: {
          items: page.items.map(toProfileView),
          totalItems: page.totalItems,
          pageNumber: page.pageNumber,
          pageSize: page.pageSize,
        },
      };
    },
  });

export const getProfileRoute = (v: Version) =>
  defineRoute({
    method: "get",
    path: `/api/${v}/profiles/{id}`,
    auth: "api-key",
    operationId: `getProfile${suffix(v)}`,
    summary: "Read one profile",
    tags,
    request: { params: IdParams },
    responses: { 200: { description: "The profile", schema: ProfileView } },
    errors: [404],
    async handler({ params, project, signal }, deps) {
      const profile = await deps.browserPool.getProfile(
        { projectId: project.projectId, profileId: params.id },
        { signal },
      );
      return { body: toProfileView(profile) };
    },
  });

export const updateProfileRoute = (v: Version) =>
  defineRoute({
    method: "patch",
    path: `/api/${v}/profiles/{id}`,
    auth: "api-key",
    operationId: `updateProfile${suffix(v)}`,
    summary: "Rename a profile or change its user id (only the fields given change)",
    tags,
    request: { params: IdParams, body: ProfileUpdateRequest },
    responses: { 200: { description: "The profile", schema: ProfileView } },
    errors: [404],
    async handler({ params, body, project, signal }, deps) {
      const fields = [...("name" in body ? ["name"] : []), ...("userId" in body ? ["user_id"] : [])];
      const profile = await deps.browserPool.updateProfile(
        {
          projectId: project.projectId,
          profileId: params.id,
          name: body.name ?? undefined,
          userId: body.userId ?? undefined,
          fields,
        },
        { signal },
      );
      return { body: toProfileView(profile) };
    },
  });

export const deleteProfileRoute = (v: Version) =>
  defineRoute({
    method: "delete",
    path: `/api/${v}/profiles/{id}`,
    auth: "api-key",
    operationId: `deleteProfile${suffix(v)}`,
    summary: "Delete a profile and its saved state; 409 while a browser has it open",
    tags,
    request: { params: IdParams },
    responses: { 204: { description: "Deleted" } },
    errors: [404, 409],
    async handler({ params, project }, deps) {
      await deps.browserPool.deleteProfile({ projectId: project.projectId, profileId: params.id });
      return { status: 204 };
    },
  });
