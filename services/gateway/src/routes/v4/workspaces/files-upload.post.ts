export { v4UploadRoute as route } from "./workspace-routes";
