import { deleteProfileRoute } from "../../v4/profiles/profile-routes";

export const route = deleteProfileRoute("v3");
