import { listBrowsersRoute } from "../../v4/browsers/browser-routes";

export const route = listBrowsersRoute("v3");
