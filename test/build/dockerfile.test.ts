/**
 * The Dockerfile's invariants, checked without a Docker engine (none runs here, and hadolint does not install
 * offline): each image's target exists on the right base, runs as a non-root user under tini, has a HEALTHCHECK,
 * carries the production dependencies only and its own compiled service, and the browser images their programs.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { MODEL_MANIFEST_PATH } from "../../services/browser-pool/src/adapters/chromium-features";
import { baseImage, effectiveInstructions, execForm, last, parseDockerfile } from "../support/dockerfile";

const ROOT = resolve(__dirname, "../..");
const stages = parseDockerfile(join(ROOT, "Dockerfile"));
const SERVICES = ["gateway", "sessions", "runner", "billing", "browser-pool"];
const TARGETS = [...SERVICES, "chromium"];
const BROWSER_PACKAGES = [
  "chromium",
  "fonts-noto-core",
  "fonts-noto-cjk",
  "fonts-noto-color-emoji",
  "fonts-liberation",
];

/** Debian packages a stage's chain installs with apt-get. */
const aptPackages = (target: string) =>
  effectiveInstructions(stages, target)
    .filter((i) => i.keyword === "RUN" && i.args.includes("apt-get install"))
    .flatMap((i) => i.args.split(/\s+/).filter((word) => /^[a-z0-9][a-z0-9.+-]+$/.test(word)));

test.each(TARGETS)("%s: a non-root user, tini as PID 1, a HEALTHCHECK, a Debian bookworm base", (target) => {
  const instructions = effectiveInstructions(stages, target);
  expect(last(instructions, "USER")?.args).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
  expect(execForm(last(instructions, "ENTRYPOINT")!.args).slice(0, 2)).toEqual(["/usr/bin/tini", "--"]);
  expect(aptPackages(target)).toContain("tini");
  expect(last(instructions, "HEALTHCHECK")?.args).toMatch(/CMD \[/);
  expect(baseImage(stages, target)).toBe(target === "chromium" ? "debian:bookworm-slim" : "node:24-bookworm-slim");
});

test.each(SERVICES)("%s: node_modules from the production install only, and its own compiled service", (target) => {
  const instructions = effectiveInstructions(stages, target);
  const copies = instructions.filter((i) => i.keyword === "COPY");
  // Built on the production install itself (the deps stage), whose only npm command is `npm ci --omit=dev`.
  const deps = effectiveInstructions(stages, "deps");
  expect(instructions.slice(0, deps.length)).toEqual(deps);
  const installs = instructions.filter((i) => i.keyword === "RUN" && /npm (ci|install)/.test(i.args));
  expect(installs.map((i) => i.args.match(/npm (ci|install)[^&]*/)![0].trim())).toEqual([
    "npm ci --omit=dev --workspaces=false --ignore-scripts --no-audit --no-fund",
  ]);
  // Nothing else of the source tree than the lock it installs, nor of the build stage's node_modules, reaches it.
  expect(copies.filter((i) => !i.args.startsWith("--from=")).map((i) => i.args)).toEqual([
    "package.json package-lock.json ./",
  ]);
  expect(copies.filter((i) => i.args.includes("node_modules"))).toEqual([]);
  expect(copies.map((i) => i.args)).toContain(`--from=build /app/dist/${target} ./dist/${target}`);
  expect(execForm(last(instructions, "CMD")!.args)).toEqual(["node", "--enable-source-maps", `dist/${target}/main.js`]);
  // The gRPC port it listens on is exposed.
  const grpcPort = instructions
    .filter((i) => i.keyword === "ENV")
    .flatMap((i) => i.args.match(/GRPC_PORT=(\d+)/)?.[1] ?? [])
    .at(-1);
  const exposed = last(instructions, "EXPOSE")!.args.split(/\s+/);
  expect(exposed).toContain(grpcPort);
});

test("the browser images carry Chromium, the fonts and ffmpeg; browser-pool the local driver's sandbox tools", () => {
  expect(aptPackages("chromium")).toEqual(expect.arrayContaining([...BROWSER_PACKAGES, "ffmpeg", "socat"]));
  expect(aptPackages("browser-pool")).toEqual(
    expect.arrayContaining([
      ...BROWSER_PACKAGES,
      "ffmpeg",
      "bubblewrap",
      "socat",
      "util-linux",
      "perl-base",
      "iproute2",
    ]),
  );
  expect(aptPackages("runner")).toEqual(expect.arrayContaining(["bubblewrap", "socat"]));
});

test("what the Dockerfile copies from the context exists, and .dockerignore keeps the host's builds out", () => {
  const fromContext = stages
    .flatMap((s) => s.instructions)
    .filter((i) => i.keyword === "COPY" && !i.args.includes("--from="))
    .flatMap((i) => i.args.replace(/--\S+/g, "").trim().split(/\s+/).slice(0, -1));
  for (const path of fromContext) expect(existsSync(join(ROOT, path))).toBe(true);
  const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n");
  // The host's node_modules holds this machine's native builds; its dist may be stale.
  expect(ignored).toEqual(expect.arrayContaining(["node_modules", "dist"]));
});

test("the browser pod image holds the local driver's Chromium files where the pod's arguments look for them", () => {
  const copies = effectiveInstructions(stages, "chromium").filter((i) => i.keyword === "COPY");
  expect(copies.map((i) => i.args)).toEqual(
    expect.arrayContaining([
      "services/browser-pool/chromium/policies.json /etc/chromium/policies/managed/bas.json",
      `services/browser-pool/chromium/model-manifest.json ${MODEL_MANIFEST_PATH}`,
    ]),
  );
});
