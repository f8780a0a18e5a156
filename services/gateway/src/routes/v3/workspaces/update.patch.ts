export { updateWorkspaceRoute as route } from "../../v4/workspaces/workspace-routes";
