import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/** Drops every permission of group and others (a folder of private things inside DATA_DIR, a log file). */
function ownerOnly(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  chmodSync(path, stat.mode & 0o700);
}

/**
 * DATA_DIR holds the deployment's keys (secrets.json), where everything runs (stack.env), the stores and the logs:
 * it is its owner's alone. When the embedded Postgres runs as the `postgres` user (the stack runs as root), that
 * group may pass through DATA_DIR to reach its own folder, and do nothing else there (0710: no listing, no reading).
 * What is directly inside, and every log, loses any permission of group and others. Modes are set on every start,
 * so a DATA_DIR made by an older version, or loosened by hand, is tightened.
 */
export function secureDataDir(dataDir: string, options: { postgresGroup?: number; logDir: string }): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (options.postgresGroup === undefined) chmodSync(dataDir, 0o700);
  else {
    chownSync(dataDir, lstatSync(dataDir).uid, options.postgresGroup);
    chmodSync(dataDir, 0o710);
  }
  mkdirSync(options.logDir, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(dataDir)) {
    // Postgres keeps its own folder 0700, owned by its user.
    if (name !== "postgres") ownerOnly(join(dataDir, name));
  }
  for (const name of readdirSync(options.logDir)) ownerOnly(join(options.logDir, name));
}

/** Writes a file only its owner can read, tightening one that exists before the new content goes in. */
export function writePrivateFile(path: string, content: string): void {
  if (existsSync(path)) chmodSync(path, 0o600);
  const fd = openSync(path, "w", 0o600);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}
