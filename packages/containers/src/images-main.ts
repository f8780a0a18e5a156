/**
 * `npm run images [target...]`: every image of the service (or the targets named), built with Podman or Docker
 * (docs/images.md).
 */
import { findEngine } from "./engine";
import { buildImages, TARGETS, type Target } from "./images";

async function main() {
  const named = process.argv.slice(2);
  const unknown = named.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown.length > 0) throw new Error(`no image ${unknown.join(", ")}: the images are ${TARGETS.join(", ")}`);
  const engine = findEngine();
  const started = Date.now();
  const log = (line: string) => console.log(`images: ${line}`);
  log(`building with ${engine.name}`);
  await buildImages(engine, process.env, log, named.length > 0 ? (named as Target[]) : TARGETS);
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().catch((err: Error) => {
  console.error(`images: ${err.message}`);
  process.exit(1);
});
