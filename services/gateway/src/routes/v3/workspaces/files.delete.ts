import { deleteFileRoute } from "../../v4/workspaces/workspace-routes";

export const route = deleteFileRoute("v3");
