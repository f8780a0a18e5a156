import { listFilesRoute } from "../../v4/workspaces/workspace-routes";

export const route = listFilesRoute("v3");
