import type { AsProtoJson, Assignable, BrowserEventType, browserPool } from "@bas/proto";
import type {
  BrowserEvent,
  BrowserFileDownloaded,
  BrowserRecordingSaved,
  BrowserRequested,
  BrowserStarted,
  BrowserStopped,
} from "../../domain/events";

/**
 * Compile-time check that the browser events' data is the JSON of the proto messages other services decode them as
 * (`browserPool.BrowserRequested.fromJSON(event.data)`), and that the domain's event types are exactly the published
 * ones; a drift fails the type-check here.
 */
export type BrowserEventContract = [
  Assignable<BrowserEvent["type"], BrowserEventType>,
  Assignable<BrowserEventType, BrowserEvent["type"]>,
  Assignable<AsProtoJson<BrowserRequested["data"]>, browserPool.BrowserRequested>,
  Assignable<AsProtoJson<BrowserStarted["data"]>, browserPool.BrowserStarted>,
  Assignable<AsProtoJson<BrowserStopped["data"]>, browserPool.BrowserStopped>,
  Assignable<AsProtoJson<BrowserRecordingSaved["data"]>, browserPool.BrowserRecordingSaved>,
  Assignable<AsProtoJson<BrowserFileDownloaded["data"]>, browserPool.BrowserFileDownloaded>,
];
