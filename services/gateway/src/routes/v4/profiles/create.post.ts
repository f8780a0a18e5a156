import { createProfileRoute } from "./profile-routes";

export const route = createProfileRoute("v4");
