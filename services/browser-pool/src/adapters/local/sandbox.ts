import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { MODEL_MANIFEST_PATH } from "../chromium-features";
import { canRun } from "../program-path";
import { isHeadlessShell } from "./chromium-args";

/** Inside every sandbox: where Chromium's DevTools and the bridge to the egress proxy listen (their own loopback). */
export const SANDBOX_DEVTOOLS_PORT = 9222;
export const SANDBOX_PROXY_PORT = 3128;

/** The two Unix sockets a sandbox is reached through, in a folder of the browser's own outside the sandbox. */
export const sandboxSockets = (socketsDir: string) => ({
  devtools: join(socketsDir, "devtools.sock"),
  egress: join(socketsDir, "egress.sock"),
});

export interface SandboxOptions {
  /** Chromium's profile: the only host folder the browser can write, bound at the same path. */
  profileDir: string;
  /** Holds the sockets; bound at /sockets for the bridges, closed to the browser's user. */
  socketsDir: string;
  /** Chromium policies (file:// blocked), bound over /etc/chromium/policies/managed. */
  policyDir: string;
  /** The empty manifest of on-device AI models, bound at MODEL_MANIFEST_PATH (chromium-features.ts). */
  modelManifest: string;
  /** The user Chromium runs as; undefined when browser-pool is not root and a user namespace stands in. */
  uid: number | undefined;
  chromiumPath: string;
  chromiumArgs: readonly string[];
}

const INIT_SCRIPT = join(__dirname, "sandbox-init.sh");

/**
 * The only entries of the host's /etc a browser sees: what Chromium, Debian's wrapper script and the bridges read
 * (fonts, the linker's cache, public CA certificates, the time zone, Debian's Chromium flags, the links behind them).
 * The rest (the host's users, its name, every service's configuration) is not there: a page reads any file the
 * browser can through a file upload (DOM.setFileInputFiles), which no URL policy stops.
 */
const ETC_SHOWN = [
  "alternatives",
  "ca-certificates",
  "chromium.d",
  "fonts",
  "ld.so.cache",
  "localtime",
  "nsswitch.conf",
  "ssl/certs",
  "timezone",
];
const FONT_CACHE = "/var/cache/fontconfig";
const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * The command that starts one browser inside bubblewrap: new network, PID, IPC and UTS namespaces, and a file
 * system that shows only the system's programs and libraries (/usr read-only, the few files of /etc that Chromium
 * reads), an empty /tmp of its own, and its profile. The host's files, DATA_DIR, other browsers' profiles, the
 * host's loopback and every DevTools port of another browser do not exist from inside.
 */
export function sandboxCommand(options: SandboxOptions): { command: string; args: string[] } {
  const args = [
    ...(options.uid === undefined ? ["--unshare-user"] : []),
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    "browser",
    "--ro-bind",
    "/usr",
    "/usr",
    ...SYSTEM_DIRS.flatMap(systemDir),
    ...hostFolderCovered("/usr/local"),
    // Folders bubblewrap creates are root's alone unless told otherwise; Chromium's user must read them.
    "--perms",
    "0755",
    "--tmpfs",
    "/etc",
    ...ETC_SHOWN.flatMap((entry) => ["--ro-bind-try", `/etc/${entry}`, `/etc/${entry}`]),
    "--perms",
    "0755",
    "--dir",
    "/etc/chromium",
    "--perms",
    "0755",
    "--dir",
    "/etc/chromium/policies",
    "--ro-bind",
    options.policyDir,
    "/etc/chromium/policies/managed",
    "--ro-bind",
    options.modelManifest,
    MODEL_MANIFEST_PATH,
    ...chromiumOutsideUsr(options.chromiumPath),
    ...fontCache(),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--perms",
    "1777",
    "--tmpfs",
    "/tmp",
    ...foldersFor(options.profileDir),
    "--bind",
    options.profileDir,
    options.profileDir,
    "--bind",
    options.socketsDir,
    "/sockets",
    "--ro-bind",
    INIT_SCRIPT,
    "/sandbox-init.sh",
    "--chdir",
    options.profileDir,
    "--",
    "/bin/sh",
    "/sandbox-init.sh",
    options.uid === undefined ? "" : String(options.uid),
    options.chromiumPath,
    ...options.chromiumArgs,
  ];
  return { command: "bwrap", args };
}

/** Usr-merged systems link /bin, /lib... into /usr; older ones have real folders, bound read-only. */
function systemDir(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink()) return ["--symlink", readlinkSync(dir), dir];
  return ["--ro-bind", dir, dir];
}

/** The host's own programs and their configuration (/usr/local) are not the system's: an empty folder stands in. */
function hostFolderCovered(dir: string): string[] {
  return existsSync(dir) ? ["--tmpfs", dir] : [];
}

/**
 * The system's font cache, read-only: without it fontconfig scans every font and writes a cache of its own into each
 * new profile (~19 ms of every cold launch). It holds nothing but what the fonts in /usr say about themselves.
 */
function fontCache(): string[] {
  return existsSync(FONT_CACHE) ? [...foldersFor(FONT_CACHE), "--ro-bind", FONT_CACHE, FONT_CACHE] : [];
}

/** A Chromium installed outside the system's /usr (/opt/..., /usr/local/...) is bound read-only where it is. */
function chromiumOutsideUsr(chromiumPath: string): string[] {
  const real = realpathSync(chromiumPath);
  if (real.startsWith("/usr/") && !real.startsWith("/usr/local/")) return [];
  const dir = dirname(real);
  return ["--ro-bind", dir, dir];
}

/** `/a/b/c` → `/a`, `/a/b`: the folders bubblewrap must create, traversable by Chromium's user, before binding `path`. */
function foldersFor(path: string): string[] {
  const parts = dirname(path).split("/").filter(Boolean);
  return parts
    .map((_, i) => `/${parts.slice(0, i + 1).join("/")}`)
    .filter((dir) => dir !== "/tmp")
    .flatMap((dir) => ["--perms", "0755", "--dir", dir]);
}

/**
 * Throws, saying what to install, when a program every local browser needs is missing: bubblewrap builds the
 * sandbox, socat bridges its two sockets, Perl relays callers' CDP into it (ss counting their bytes), and Chromium is
 * the browser.
 */
export function checkSandboxTools(chromiumPath: string): void {
  const missing = ["bwrap", "socat", "perl", "ss"].filter((tool) => !canRun(tool));
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(", ")} not found: every local browser runs in a bubblewrap sandbox reached through socat, ` +
        "callers' CDP relayed into it by Perl and counted by ss; install them (Debian/Ubuntu: apt-get install -y " +
        "bubblewrap socat perl-base iproute2; Fedora: dnf install -y bubblewrap socat perl-interpreter iproute)",
    );
  }
  if (!canRun(chromiumPath)) {
    throw new Error(
      `Chromium not found at ${chromiumPath}: install it (apt-get install -y ${isHeadlessShell(chromiumPath) ? "chromium-headless-shell" : "chromium"}) or set CHROMIUM_PATH`,
    );
  }
}
