export { deleteWorkspaceRoute as route } from "../../v4/workspaces/workspace-routes";
