export { v3UploadRoute as route } from "../../v4/workspaces/workspace-routes";
