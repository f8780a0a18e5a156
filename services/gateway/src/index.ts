export { type GatewayConfig, loadGatewayConfig } from "./config";
export { type GatewayService, ROUTES, startGatewayService } from "./service";
