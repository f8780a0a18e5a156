import type { ColumnType } from "kysely";

export interface ProjectsTable {
  id: string;
  name: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  label: string;
  /** The key's first characters (`bas_` + 8): shown to recognise a key, and the index a lookup starts from. */
  prefix: string;
  /** SHA-256 of the whole key; the key itself is never stored. */
  hash: Buffer;
  created_at: ColumnType<Date, Date | undefined, never>;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface GatewayDatabase {
  gateway_projects: ProjectsTable;
  gateway_api_keys: ApiKeysTable;
}
