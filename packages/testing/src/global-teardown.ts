import { rmSync } from "node:fs";

export default async function globalTeardown(): Promise<void> {
  const stops = (globalThis as { __basInfraStops?: Array<() => Promise<void>> }).__basInfraStops ?? [];
  await Promise.all(stops.map((stop) => stop()));
  const root = process.env.BAS_TEST_ROOT;
  if (root) rmSync(root, { recursive: true, force: true });
}
