import { listDownloadsRoute } from "../../v4/browsers/browser-routes";

export const route = listDownloadsRoute("v3");
