import { updateWorkspaceRoute } from "./workspace-routes";

export const route = updateWorkspaceRoute("v4");
