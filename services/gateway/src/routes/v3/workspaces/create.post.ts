import { createWorkspaceRoute } from "../../v4/workspaces/workspace-routes";

export const route = createWorkspaceRoute("v3");
