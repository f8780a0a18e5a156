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
];
