import { listDownloadsRoute } from "./browser-routes";

export const route = listDownloadsRoute("v4");
