import { listBrowsersRoute } from "./browser-routes";

export const route = listBrowsersRoute("v4");
