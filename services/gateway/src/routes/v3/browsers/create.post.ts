import { createBrowserRoute } from "../../v4/browsers/browser-routes";

export const route = createBrowserRoute("v3");
