import { workspaceSizeRoute } from "../../v4/workspaces/workspace-routes";

export const route = workspaceSizeRoute("v3");
