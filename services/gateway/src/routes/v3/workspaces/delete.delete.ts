import { deleteWorkspaceRoute } from "../../v4/workspaces/workspace-routes";

export const route = deleteWorkspaceRoute("v3");
