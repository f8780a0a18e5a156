export { type BrowserPoolConfig, loadBrowserPoolConfig } from "./config";
export { type BrowserPoolService, type BrowserPoolServiceDeps, startBrowserPoolService } from "./service";
