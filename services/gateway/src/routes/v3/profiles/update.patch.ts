import { updateProfileRoute } from "../../v4/profiles/profile-routes";

export const route = updateProfileRoute("v3");
