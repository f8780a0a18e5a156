import { deleteWorkspaceRoute } from "./workspace-routes";

export const route = deleteWorkspaceRoute("v4");
