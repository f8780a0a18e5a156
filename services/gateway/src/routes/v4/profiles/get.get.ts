import { getProfileRoute } from "./profile-routes";

export const route = getProfileRoute("v4");
