export { type BillingConfig, loadBillingConfig } from "./config";
export { type BillingDeps, type BillingService, startBillingService } from "./service";
