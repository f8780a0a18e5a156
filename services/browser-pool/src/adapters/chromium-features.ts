/**
 * Chromium features every browser runs without, whichever driver starts it (`--disable-features`): what a headless
 * browser driven over CDP never uses, and what costs memory at rest (bench/browser-memory.ts).
 */
export const DISABLED_FEATURES = [
  "Translate",
  "OptimizationHints",
  "MediaRouter",
  "DialMediaRouteProvider",
  // The omnibox's WebUI popups are preloaded in a renderer of their own, though a headless browser has no omnibox:
  // about 50 MB of every idle browser.
  "WebUIOmniboxPopup",
  "WebUIOmniboxAimPopup",
  "WebUIOmniboxFullPopup",
  // A renderer started ahead of the next navigation that needs one: ~7 MB of every idle browser, and no measurable
  // time on a new page or a cross-site navigation (bench/browsers.ts (b)).
  "SpareRendererForSitePerProcess",
  // Asks clients2.google.com for the time at every launch (through the tenant's proxy, a paid upstream's included).
  "NetworkTimeServiceQuerying",
];

/**
 * ANGLE (WebGL, drawn by SwiftShader) otherwise suballocates its images from blocks of device memory and makes one
 * of 8 MiB when the GPU process starts, which SwiftShader zero-fills: 8 MB of every idle browser, though few pages
 * ever draw WebGL. Without suballocation each image gets memory of its own size; WebGL works and draws as fast
 * (bench/browser-memory.ts).
 */
export const ANGLE_FEATURES_ARG = "--disable-angle-features=useVmaForImageSuballocation";

/**
 * Where a browser finds an empty manifest of on-device AI models (`NO_MODEL_MANIFEST`). Without it, every launch asks
 * update.googleapis.com for the manifest of Gemini Nano's models, telling Google the host's kernel, memory and CPU
 * flags; neither `--disable-component-update`, the features of those models nor the ComponentUpdatesEnabled policy
 * stop that request (checked with Chromium 156). A manifest override, meant for Chromium's own tests, does: the models
 * are then looked for only where it says, and it names none.
 */
export const MODEL_MANIFEST_PATH = "/etc/chromium/model-manifest.json";
/** The file itself (services/browser-pool/chromium/), also copied into the browser image by the Dockerfile. */
export { default as NO_MODEL_MANIFEST } from "../../chromium/model-manifest.json";
export const MODEL_MANIFEST_ARG = `--optimization-guide-manifest-override=${MODEL_MANIFEST_PATH}`;

/**
 * A browser's window at the top left of a screen of its own size. Headless Chromium otherwise reports a screen of
 * 800x600 under a window of any size, 10 px in from the corner: a page reads that as `screen.width`, sites lay out
 * by it, and bot checks notice a window larger than its screen. A warm browser handed out at another size gets both
 * over CDP instead (`cdp/window-size.ts`).
 */
export function windowArgs(width: number, height: number): string[] {
  return [`--window-size=${width},${height}`, "--window-position=0,0", `--screen-info={${width}x${height}}`];
}
