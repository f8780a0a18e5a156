import { createBrowserRoute } from "./browser-routes";

export const route = createBrowserRoute("v4");
