import { UnavailableError } from "@bas/errors";

/** No browser could be started (Chromium failed to launch, no pod became ready); retrying later may succeed. */
export class BrowserUnavailableError extends UnavailableError {}
