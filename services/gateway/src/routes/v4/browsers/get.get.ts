import { getBrowserRoute } from "./browser-routes";

export const route = getBrowserRoute("v4");
