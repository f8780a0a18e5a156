import { getBrowserRoute } from "../../v4/browsers/browser-routes";

export const route = getBrowserRoute("v3");
