import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine } from "@bas/containers";
import { containerRuntime } from "./containers";

const engine = (name: Engine["name"]): Engine => ({
  name,
  env: { CONTAINERS_CONF: "/cache/bas/containers.conf" },
  runArgs: name === "podman" ? ["--ulimit", "host"] : [],
  exec: async () => "",
  hasImage: async () => true,
});

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "bas-containers-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

test("a service's container gets the stack's variables by name only: no secret on a command line, none of the host's", () => {
  const env = { SECRETS_KEY: "s3cret", NATS_URL: "nats://127.0.0.1:4222", PATH: "/host/bin", HOME: "/root" };
  const { program, args, env: engineEnv } = containerRuntime(engine("podman"), dataDir).command("gateway", env);
  expect(program).toBe("podman");
  expect(args.join(" ")).not.toContain("s3cret");
  expect(args).toEqual(expect.arrayContaining(["--env", "SECRETS_KEY", "--env", "NATS_URL"]));
  expect(args).not.toContain("PATH");
  expect(args).not.toContain("HOME");
  // Read-only root, the host's network (its loopback model keeps working), the host's rlimits, its image last.
  expect(args).toEqual(expect.arrayContaining(["--read-only", "--network=host", "--rm", "--ulimit", "host"]));
  expect(args.at(-1)).toBe("localhost/bas/gateway:0.1.0");
  expect(engineEnv).toEqual({ CONTAINERS_CONF: "/cache/bas/containers.conf" });
});

test("browser-pool keeps its browsers in a folder of DATA_DIR that the image's user owns; NATS and Postgres in volumes", () => {
  const runtime = containerRuntime(engine("docker"), dataDir);
  const pool = runtime.command("browser-pool", {}).args;
  const browsers = join(dataDir, "containers", "browsers");
  expect(pool).toEqual(expect.arrayContaining(["--volume", `${browsers}:/data/browsers`, "--tmpfs", "/tmp"]));
  expect(statSync(browsers).uid).toBe(1000);
  expect(statSync(browsers).mode & 0o777).toBe(0o700);
  const [nats, postgres] = [runtime.command("nats", {}).args, runtime.command("postgres", {}).args];
  expect(nats[nats.indexOf("--volume") + 1]).toMatch(/^bas-[0-9a-f]{8}-nats:\/data$/);
  expect(postgres[postgres.indexOf("--volume") + 1]).toMatch(/^bas-[0-9a-f]{8}-postgres:\/data$/);
  // Two stacks (two DATA_DIRs) never share a container name or a volume.
  const other = containerRuntime(engine("docker"), join(dataDir, "other")).command("nats", {}).args;
  expect(other.find((a) => a.startsWith("--name="))).not.toBe(nats.find((a) => a.startsWith("--name=")));
});
