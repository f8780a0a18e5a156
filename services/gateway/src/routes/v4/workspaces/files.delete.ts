import { deleteFileRoute } from "./workspace-routes";

export const route = deleteFileRoute("v4");
