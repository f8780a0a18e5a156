import { listProfilesRoute } from "./profile-routes";

export const route = listProfilesRoute("v4");
