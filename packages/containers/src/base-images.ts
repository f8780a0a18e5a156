import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Engine } from "./engine";

const run = promisify(execFile);

/** The images the Dockerfile builds from (its NODE_IMAGE and DEBIAN_IMAGE arguments). */
export interface BaseImages {
  /** Undefined when no image to be built needs Node (chromium, nats, postgres). */
  node?: string;
  debian: string;
}

/** What the Dockerfile names by default, used where they can be pulled. */
const UPSTREAM = { node: "docker.io/library/node:24-bookworm-slim", debian: "docker.io/library/debian:bookworm-slim" };

/** Our own, built here from Debian's packages and the npm registry's Node where no registry is reachable. */
export const OWN_DEBIAN = "localhost/bas/debian:bookworm";
export const ownNode = (nodeVersion: string) => `localhost/bas/node:${nodeVersion}-bookworm`;

type Log = (line: string) => void;

/**
 * The base images: NODE_IMAGE and DEBIAN_IMAGE where set; else the upstream ones where they are here or can be
 * pulled; else ours, built once (a minimal Debian bookworm by debootstrap, and Node on it) and kept in the store.
 */
export async function baseImages(
  engine: Engine,
  env: NodeJS.ProcessEnv,
  log: Log,
  withNode = true,
): Promise<BaseImages> {
  const debian = env.DEBIAN_IMAGE || ((await available(engine, UPSTREAM.debian)) ? UPSTREAM.debian : undefined);
  if (!withNode) return { debian: debian ?? (await ensureOwnDebian(engine, env, log)) };
  const node = env.NODE_IMAGE || ((await available(engine, UPSTREAM.node)) ? UPSTREAM.node : undefined);
  if (debian && node) return { debian, node };
  const ownDebian = debian ?? (await ensureOwnDebian(engine, env, log));
  return { debian: ownDebian, node: node ?? (await ensureOwnNode(engine, ownDebian, log)) };
}

async function available(engine: Engine, reference: string): Promise<boolean> {
  if (await engine.hasImage(reference)) return true;
  return engine.exec(["pull", "--quiet", reference]).then(
    () => true,
    () => false,
  );
}

/** Debian's own slim settings: no documentation or man pages installed, no package lists or archives kept. */
const SLIM_DPKG = `path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
`;
const SLIM_APT = `APT::Install-Recommends "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb || true"; };
Binary::apt::APT::Keep-Downloaded-Packages "false";
`;
const sources = (mirror: string) => `Types: deb
URIs: ${mirror}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror.replace(/\/debian\/?$/, "/debian-security")}
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`;

async function ensureOwnDebian(engine: Engine, env: NodeJS.ProcessEnv, log: Log): Promise<string> {
  if (await engine.hasImage(OWN_DEBIAN)) return OWN_DEBIAN;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `${UPSTREAM.debian} cannot be pulled here, and building a Debian base image of our own (debootstrap) needs ` +
        "root: run `npm run images` as root, or set DEBIAN_IMAGE and NODE_IMAGE to images this machine has.",
    );
  }
  const mirror = env.DEBIAN_MIRROR || "http://deb.debian.org/debian";
  const root = mkdtempSync(join(tmpdir(), "bas-debian-"));
  try {
    log(`building ${OWN_DEBIAN}: debootstrap --variant=minbase bookworm from ${mirror} (about a minute or two)`);
    await run("debootstrap", ["--variant=minbase", "bookworm", root, mirror], { maxBuffer: 64 << 20 }).catch(
      (err: NodeJS.ErrnoException & { stderr?: string }) => {
        throw new Error(
          err.code === "ENOENT"
            ? "debootstrap not found: npm run setup installs it (apt-get install -y debootstrap)."
            : `debootstrap failed: ${err.stderr?.trim().split("\n").slice(-3).join(" ")}`,
        );
      },
    );
    writeFileSync(join(root, "etc/dpkg/dpkg.cfg.d/slim"), SLIM_DPKG);
    writeFileSync(join(root, "etc/apt/apt.conf.d/slim"), SLIM_APT);
    rmSync(join(root, "etc/apt/sources.list"), { force: true });
    writeFileSync(join(root, "etc/apt/sources.list.d/debian.sources"), sources(mirror));
    // What debootstrap downloaded and unpacked but an image does not carry.
    await run(
      "sh",
      [
        "-c",
        "rm -rf var/cache/apt/archives/*.deb var/lib/apt/lists/* usr/share/doc/* usr/share/man/* usr/share/info/* " +
          "$(ls -d usr/share/locale/* | grep -v locale.alias)",
      ],
      { cwd: root },
    );
    const archive = join(root, "..", `${root.split("/").pop()}.tar`);
    await run("tar", ["-C", root, "-cf", archive, "."]);
    try {
      await engine.exec(["import", "--change", 'CMD ["bash"]', archive, OWN_DEBIAN]);
    } finally {
      rmSync(archive, { force: true });
    }
    return OWN_DEBIAN;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Node and npm as the official image lays them out (/usr/local), with its user `node` (uid 1000). */
async function ensureOwnNode(engine: Engine, debian: string, log: Log): Promise<string> {
  const version = process.versions.node;
  const reference = ownNode(version);
  if (await engine.hasImage(reference)) return reference;
  const arch = { x64: "x64", arm64: "arm64" }[process.arch as "x64" | "arm64"];
  if (!arch) throw new Error(`no Node.js build of the npm registry for ${process.arch}: set NODE_IMAGE.`);
  log(`building ${reference}: Node ${version} (node-linux-${arch} from the npm registry) on ${debian}`);
  const context = mkdtempSync(join(tmpdir(), "bas-node-image-"));
  try {
    const npmVersion = (await run("npm", ["--version"])).stdout.trim();
    for (const spec of [`node-linux-${arch}@${version}`, `npm@${npmVersion}`]) {
      const { stdout } = await run("npm", ["pack", "--silent", "--pack-destination", context, spec]);
      const tarball = stdout.trim().split("\n").at(-1)!;
      const dir = join(context, spec.startsWith("npm@") ? "npm" : "node");
      await run("mkdir", ["-p", dir]);
      await run("tar", ["-xzf", join(context, tarball), "-C", dir, "--strip-components=1"]);
      rmSync(join(context, tarball));
    }
    writeFileSync(
      join(context, "Containerfile"),
      `FROM ${debian}
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
    && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
    && node --version && npm --version
CMD ["node"]
`,
    );
    await engine.exec(["build", "-t", reference, context]);
    return reference;
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}
