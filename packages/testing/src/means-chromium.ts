/**
 * The Chromium of the tests whose browsers are only a means: agents running tasks, sessions and runs end to end,
 * projects at their browser limit. Debian's headless shell, a CHROMIUM_PATH the service supports (README), whose
 * launch and stop take half the CPU of full Chromium's (1.0 against 2.0 core-seconds here), and browser launches are
 * what bounds the suite on 2 cores. What is about the browser itself (windows, screens, GPU, sandbox layout, CDP
 * clients, recordings, live view) runs full Chromium, as the service ships. `BAS_TEST_MEANS_CHROMIUM` names another
 * (`/usr/bin/chromium`: every test on full Chromium).
 */
export const MEANS_CHROMIUM = process.env.BAS_TEST_MEANS_CHROMIUM || "/usr/bin/chromium-headless-shell";
