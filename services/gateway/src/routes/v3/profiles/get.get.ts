import { getProfileRoute } from "../../v4/profiles/profile-routes";

export const route = getProfileRoute("v3");
