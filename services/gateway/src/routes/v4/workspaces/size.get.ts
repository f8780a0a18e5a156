import { workspaceSizeRoute } from "./workspace-routes";

export const route = workspaceSizeRoute("v4");
