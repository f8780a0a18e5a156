import type { Launched, Launcher } from "./ports";
import { createLaunchHealth } from "./launch-health";
import { WARM_SETTINGS } from "../domain/browser-settings";

/** A launcher whose launches succeed or fail as the test says. */
function scriptedLauncher(outcomes: Array<"ok" | Error>): Launcher {
  return {
    async launch(id) {
      const outcome = outcomes.shift();
      if (outcome instanceof Error) throw outcome;
      return { id } as Launched;
    },
    launchWarm(id) {
      return this.launch(id, WARM_SETTINGS);
    },
    adopt: async () => undefined,
    reroute: async () => undefined,
    resize: async () => undefined,
    checkCustomProxy: async () => undefined,
  };
}

const warm = () => ({ idle: 1, size: 2 });

test("given a missing browser program, the report says so and how to fix it, before any launch", () => {
  const health = createLaunchHealth({
    preflight: () => {
      throw new Error("Chromium not found at /nope: install it (apt-get install -y chromium) or set CHROMIUM_PATH");
    },
    warm,
  });
  expect(health.report()).toEqual({
    canLaunch: false,
    problem: "Chromium not found at /nope: install it (apt-get install -y chromium) or set CHROMIUM_PATH",
    warmIdle: 1,
    warmSize: 2,
  });
});

test("given three failed launches in a row, the node cannot launch; one success makes it healthy again", async () => {
  const crash = new Error("Chromium exited (code 1) before DevTools was up: \n[0101] a kilobyte of Chromium log");
  const health = createLaunchHealth({ warm });
  const launcher = health.watch(scriptedLauncher([crash, crash, crash, "ok"]));

  await expect(launcher.launch("a", WARM_SETTINGS)).rejects.toBe(crash);
  await expect(launcher.launch("b", WARM_SETTINGS)).rejects.toBe(crash);
  expect(health.report().canLaunch).toBe(true); // two could be bad luck
  await expect(launcher.launch("c", WARM_SETTINGS)).rejects.toBe(crash);
  expect(health.report()).toMatchObject({
    canLaunch: false,
    problem: "the last 3 browser launches failed, the last with: Chromium exited (code 1) before DevTools was up:",
  });

  await launcher.launch("d", WARM_SETTINGS);
  expect(health.report()).toMatchObject({ canLaunch: true, problem: "" });
});

test("given working launches and a program that is there, the node can launch", async () => {
  const health = createLaunchHealth({ preflight: () => undefined, warm });
  await health.watch(scriptedLauncher(["ok"])).launch("a", WARM_SETTINGS);
  expect(health.report()).toEqual({ canLaunch: true, problem: "", warmIdle: 1, warmSize: 2 });
});
