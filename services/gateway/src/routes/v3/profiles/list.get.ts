import { listProfilesRoute } from "../../v4/profiles/profile-routes";

export const route = listProfilesRoute("v3");
