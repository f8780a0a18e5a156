import { deleteProfileRoute } from "./profile-routes";

export const route = deleteProfileRoute("v4");
