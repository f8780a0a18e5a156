export { workspaceSizeRoute as route } from "../../v4/workspaces/workspace-routes";
