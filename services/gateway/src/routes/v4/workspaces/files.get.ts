import { listFilesRoute } from "./workspace-routes";

export const route = listFilesRoute("v4");
