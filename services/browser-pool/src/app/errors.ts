import { status } from "@grpc/grpc-js";
import { ServiceError } from "@bas/service-kit";

/** No browser could be started (Chromium failed to launch, no pod became ready); retrying later may succeed. */
export class BrowserUnavailableError extends ServiceError {
  readonly code = status.UNAVAILABLE;
  readonly kind = "unavailable";
}
