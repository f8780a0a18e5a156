import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { freePort } from "@bas/embedded-infra";

const ROOT = resolve(__dirname, "../../..");
const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);

const choose = (count: number) => Promise.all(Array.from({ length: count }, () => freePort()));

/** Ports chosen by another process (a launcher, another test file's worker) at the same time. */
function chosenByAnotherProcess(count: number): number[] {
  const script = `const { freePort } = require("@bas/embedded-infra");
    Promise.all(Array.from({ length: ${count} }, () => freePort())).then((p) => process.stdout.write(JSON.stringify(p)));`;
  return JSON.parse(execFileSync(process.execPath, ["--import", "tsx", "-e", script], { cwd: ROOT }).toString());
}

test("ports are chosen below the kernel's ephemeral range, where no outgoing connection or listen(0) takes them", async () => {
  for (const port of [...(await choose(50)), ...chosenByAnotherProcess(50)]) expect(port).toBeLessThan(ephemeralLow);
});

test("a port handed out is not handed out again before its server had time to bind it, in any process", async () => {
  const mine = new Set(await choose(400));
  expect(mine.size).toBe(400);
  expect(chosenByAnotherProcess(400).filter((port) => mine.has(port))).toEqual([]);
});
