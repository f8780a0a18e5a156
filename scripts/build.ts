/**
 * `npm run build`: each service compiled to one runnable JavaScript file, `dist/<name>/main.js`, which the images run
 * as `node --enable-source-maps dist/<name>/main.js`; and `dist/grpc-health-probe.js`, their HEALTHCHECK.
 *
 * esbuild bundles the project's own code (services, `packages/*`, `proto/gen`: TypeScript that Node cannot run) and
 * leaves every npm package external, to be installed by `npm ci --omit=dev`. The output is CommonJS like the
 * sources: `main.ts` defers its `require("./service")` until OpenTelemetry has started, and esbuild keeps such a
 * require lazy, so gRPC, HTTP and pg are still instrumented.
 */
import { copyFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, resolve } from "node:path";
import { build, type Metafile, type Plugin, stop } from "esbuild";

const ROOT = resolve(__dirname, "..");

export const SERVICES = ["gateway", "sessions", "runner", "billing", "browser-pool"] as const;

/** Bare imports stay `require`s, except the project's own packages, whose `main` is TypeScript source. */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@bas/") ? undefined : { external: true }));
  },
};

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
const packageName = (path: string) =>
  path
    .split("/")
    .slice(0, path.startsWith("@") ? 2 : 1)
    .join("/");

/**
 * What an image has at run time is the root `dependencies`: a bundle that requires a devDependency (or a package not
 * declared at all) would work here and crash in the image, so it fails the build instead.
 */
function checkExternals(metafile: Metafile): void {
  const { dependencies } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const missing = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const { path, external } of output.imports) {
      if (external && !isBuiltin(path) && !(packageName(path) in dependencies)) missing.add(packageName(path));
    }
  }
  if (missing.size > 0) {
    throw new Error(`not in package.json "dependencies", so not in the images: ${[...missing].join(", ")}`);
  }
}

/**
 * Files the code reads next to its own source (`join(__dirname, "sandbox-init.sh")`, the runner's in-page `.js`
 * scripts): in the bundle `__dirname` is `dist/<name>`, so every non-TypeScript file beside a bundled source file is
 * copied there. Two different files of one name would shadow each other: an error.
 */
function copyAssets(metafile: Metafile, outFile: string): string[] {
  const output = metafile.outputs[Object.keys(metafile.outputs).find((o) => resolve(ROOT, o) === outFile)!];
  const inputs = new Set(Object.keys(output.inputs).map((i) => resolve(ROOT, i)));
  // Source folders only (`.../src/...`): a package's root holds its configuration (proto/buf.yaml), not assets.
  const sourceDirs = new Set(
    [...inputs].map(dirname).filter((d) => /\/src(\/|$)/.test(d) && !d.includes("/node_modules/")),
  );
  const copied = new Map<string, string>();
  for (const dir of sourceDirs) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = join(dir, entry.name);
      if (!entry.isFile() || inputs.has(file) || /\.(ts|md)$|^package\.json$/.test(entry.name)) continue;
      const previous = copied.get(entry.name);
      if (previous && !readFileSync(previous).equals(readFileSync(file))) {
        throw new Error(`two assets named ${entry.name}: ${previous} and ${file}`);
      }
      copyFileSync(file, join(dirname(outFile), entry.name));
      copied.set(entry.name, file);
    }
  }
  return [...copied.keys()].sort();
}

export interface BuildResult {
  /** Per service, the asset files copied beside its main.js. */
  assets: Record<string, string[]>;
}

/** Builds every service into `outDir` (`dist/` by default), replacing what was there. */
export async function buildServices(options: { outDir?: string } = {}): Promise<BuildResult> {
  const outDir = resolve(options.outDir ?? join(ROOT, "dist"));
  rmSync(outDir, { recursive: true, force: true });
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: {
      ...Object.fromEntries(SERVICES.map((s) => [`${s}/main`, `services/${s}/src/main.ts`])),
      "grpc-health-probe": "scripts/grpc-health-probe.ts",
    },
    outdir: outDir,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    // Stack traces name the TypeScript files and lines (with `node --enable-source-maps`).
    sourcemap: true,
    // As under tsx: classes and functions keep their names where bundling would rename them to avoid clashes.
    keepNames: true,
    plugins: [externalPackages],
    metafile: true,
    logLevel: "warning",
  }).finally(() => stop()); // esbuild's helper process would outlive the build (and a test run) otherwise
  checkExternals(metafile);
  const assets = Object.fromEntries(SERVICES.map((s) => [s, copyAssets(metafile, join(outDir, s, "main.js"))]));
  return { assets };
}

if (require.main === module) {
  const started = performance.now();
  buildServices().then(
    ({ assets }) => {
      for (const [service, files] of Object.entries(assets)) {
        console.log(`dist/${service}/main.js${files.length ? ` (+ ${files.join(", ")})` : ""}`);
      }
      console.log(`built in ${Math.round(performance.now() - started)} ms`);
    },
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
