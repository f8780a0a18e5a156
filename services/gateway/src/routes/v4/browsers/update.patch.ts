import { updateBrowserRoute } from "./browser-routes";

export const route = updateBrowserRoute("v4");
