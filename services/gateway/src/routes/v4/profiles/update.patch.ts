import { updateProfileRoute } from "./profile-routes";

export const route = updateProfileRoute("v4");
