import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writePrivateFile } from "./private-files";

/**
 * Keys generated on the first start and kept in DATA_DIR, so a restart keeps working with the same data. The file is
 * readable by its owner only (and tightened if an older version left it readable to others).
 */
export interface StackSecrets {
  apiKey: string;
  secretsKey: string;
  blobSigningKey: string;
  providerKeySecret: string;
}

export function loadOrCreateSecrets(dataDir: string): StackSecrets {
  const file = join(dataDir, "secrets.json");
  const existing: Partial<StackSecrets> = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  const secrets: StackSecrets = {
    apiKey: existing.apiKey ?? `bas_${randomBytes(24).toString("base64url")}`,
    secretsKey: existing.secretsKey ?? randomBytes(32).toString("hex"),
    blobSigningKey: existing.blobSigningKey ?? randomBytes(32).toString("hex"),
    providerKeySecret: existing.providerKeySecret ?? randomBytes(32).toString("hex"),
  };
  writePrivateFile(file, JSON.stringify(secrets, null, 2));
  return secrets;
}
