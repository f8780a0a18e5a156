import { getWorkspaceRoute } from "./workspace-routes";

export const route = getWorkspaceRoute("v4");
