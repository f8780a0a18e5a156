import { updateWorkspaceRoute } from "../../v4/workspaces/workspace-routes";

export const route = updateWorkspaceRoute("v3");
