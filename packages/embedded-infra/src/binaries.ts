import { execFileSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { z } from "zod";

/** Thrown when a program the local stack needs is not installed; says how to install it. */
export class MissingBinaryError extends Error {
  override name = "MissingBinaryError";
}

/** The variables that say where the programs are; an empty one counts as unset. */
const programEnv = () =>
  z
    .object({
      PATH: z.string().default(""),
      NATS_SERVER_PATH: z.string().optional(),
      PG_BIN: z.string().optional(),
      CHROMIUM_PATH: z.string().optional(),
    })
    .parse(Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== "")));

function onPath(name: string): string | undefined {
  const dirs = [...programEnv().PATH.split(delimiter), "/usr/sbin", "/usr/local/sbin", "/sbin"];
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

export function findNatsServer(): string {
  const found = programEnv().NATS_SERVER_PATH ?? onPath("nats-server");
  if (!found || !existsSync(found)) {
    throw new MissingBinaryError("nats-server not found: install it (apt-get install -y nats-server) or set NATS_URL.");
  }
  return found;
}

/** The bin folder of the newest installed PostgreSQL server. */
export function findPostgresBin(): string {
  const explicit = programEnv().PG_BIN;
  if (explicit && existsSync(join(explicit, "pg_ctl"))) return explicit;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const fromPath = onPath("pg_ctl");
  if (versions[0]) return join(root, versions[0], "bin");
  if (fromPath) return join(fromPath, "..");
  throw new MissingBinaryError(
    "PostgreSQL server not found: install it (apt-get install -y postgresql) or set DATABASE_URL.",
  );
}

const isExecutable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/** Debian's package of a Chromium path: the headless shell has one of its own. */
const chromiumPackage = (path: string) =>
  /headless[-_]shell/.test(path.split("/").pop() ?? "") ? "chromium-headless-shell" : "chromium";

/**
 * The Chromium to run: `CHROMIUM_PATH` when set (and only it: a path given by hand that is wrong must say so),
 * otherwise /usr/bin/chromium, `chromium` or `chromium-browser` on PATH.
 */
export function findChromium(explicit = programEnv().CHROMIUM_PATH): string {
  const candidates = explicit ? [explicit] : ["/usr/bin/chromium", onPath("chromium"), onPath("chromium-browser")];
  const found = candidates.find((c): c is string => !!c && isExecutable(c));
  if (!found) {
    throw new MissingBinaryError(
      `Chromium not found at ${explicit ?? "/usr/bin/chromium"}${explicit ? "" : " (nor chromium or chromium-browser on PATH)"}: ` +
        `install it (apt-get install -y ${chromiumPackage(explicit ?? "chromium")}) or set CHROMIUM_PATH${explicit ? " to where it is" : ""}`,
    );
  }
  return found;
}

/**
 * Runs `<path> --version` (a few tens of milliseconds) and returns what it printed, so that a CHROMIUM_PATH that
 * names some other program, or a Chromium that cannot start (a missing library), is caught before the stack starts.
 */
export function checkChromiumRuns(path: string): string {
  let printed: string;
  try {
    printed = execFileSync(path, ["--version"], {
      encoding: "utf8",
      timeout: 15_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const reason = (err as { stderr?: string }).stderr?.trim().split("\n")[0] || (err as Error).message.split("\n")[0];
    throw new MissingBinaryError(
      `${path} does not run (${reason}): reinstall Chromium (apt-get install -y ${chromiumPackage(path)}) or set CHROMIUM_PATH`,
    );
  }
  if (!/chrom/i.test(printed)) {
    throw new MissingBinaryError(
      `${path} is not Chromium (its --version printed "${printed.trim().slice(0, 80)}"): set CHROMIUM_PATH to a Chromium`,
    );
  }
  return printed.trim();
}

/**
 * Every local browser runs in a bubblewrap sandbox reached through socat, callers' CDP relayed into it by Perl and
 * counted by ss.
 */
export function checkSandboxTools(): void {
  const missing = ["bwrap", "socat", "perl", "ss"].filter((tool) => {
    const found = onPath(tool);
    return !found || !isExecutable(found);
  });
  if (missing.length > 0) {
    throw new MissingBinaryError(
      `${missing.join(", ")} not found: every browser runs in a bubblewrap sandbox reached through socat, callers' ` +
        "CDP relayed into it by Perl and counted by ss; install them (apt-get install -y bubblewrap socat perl-base " +
        "iproute2)",
    );
  }
}
