import { getWorkspaceRoute } from "../../v4/workspaces/workspace-routes";

export const route = getWorkspaceRoute("v3");
