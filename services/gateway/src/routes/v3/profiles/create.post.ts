import { createProfileRoute } from "../../v4/profiles/profile-routes";

export const route = createProfileRoute("v3");
