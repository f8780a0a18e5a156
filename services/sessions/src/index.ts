export { loadSessionsConfig, type SessionsConfig } from "./config";
export { startSessionsService, type SessionsService, type SessionsServiceDeps } from "./service";
