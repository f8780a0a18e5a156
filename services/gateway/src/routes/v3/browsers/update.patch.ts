import { updateBrowserRoute } from "../../v4/browsers/browser-routes";

export const route = updateBrowserRoute("v3");
