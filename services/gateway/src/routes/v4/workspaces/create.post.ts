import { createWorkspaceRoute } from "./workspace-routes";

export const route = createWorkspaceRoute("v4");
