/** `npm run images`: every image of the service, built with Podman or Docker (docs/images.md). */
import { findEngine } from "./engine";
import { buildImages } from "./images";

async function main() {
  const engine = findEngine();
  const started = Date.now();
  const log = (line: string) => console.log(`images: ${line}`);
  log(`building with ${engine.name}`);
  await buildImages(engine, process.env, log);
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().catch((err: Error) => {
  console.error(`images: ${err.message}`);
  process.exit(1);
});
