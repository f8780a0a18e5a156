import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findEngine, NoEngineError } from "./engine";

// A folder for PATH holding a `podman` that is found but never run: findEngine only looks the program up.
let bin: string;
beforeAll(() => {
  bin = mkdtempSync(join(tmpdir(), "engine-path-"));
  writeFileSync(join(bin, "podman"), "#!/bin/sh\nexit 1\n");
  chmodSync(join(bin, "podman"), 0o755);
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));

test("a CONTAINERS_CONF that names no file is refused at once, saying what to do", () => {
  const env = { PATH: bin, CONTAINERS_CONF: join(bin, "missing.conf"), XDG_CACHE_HOME: bin };
  expect(() => findEngine(env)).toThrow(NoEngineError);
  expect(() => findEngine(env)).toThrow(/CONTAINERS_CONF=.*missing\.conf: no such file\. Unset it/);
});

test("without CONTAINERS_CONF, Podman gets the containers.conf written for this machine", () => {
  const engine = findEngine({ PATH: bin, XDG_CACHE_HOME: bin });
  expect(engine.name).toBe("podman");
  expect(engine.env.CONTAINERS_CONF).toBe(join(bin, "bas", "containers.conf"));
  expect(engine.runArgs).toEqual(["--ulimit", "host"]);
});

test("a CONTAINERS_CONF of the user's own that exists is kept", () => {
  const own = join(bin, "own.conf");
  writeFileSync(own, "[containers]\n");
  expect(findEngine({ PATH: bin, CONTAINERS_CONF: own }).env.CONTAINERS_CONF).toBe(own);
});

test("no engine on PATH, or an unknown CONTAINER_ENGINE, says what to install or set", () => {
  expect(() => findEngine({ PATH: join(bin, "nothing") })).toThrow(/no container engine not found: install Podman/);
  expect(() => findEngine({ PATH: bin, CONTAINER_ENGINE: "lxc" })).toThrow(/CONTAINER_ENGINE=lxc: it must be/);
});
