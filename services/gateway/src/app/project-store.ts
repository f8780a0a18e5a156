export interface ProjectRecord {
  id: string;
  name: string;
  createdAt: Date;
}

export interface ApiKeyRecord {
  id: string;
  projectId: string;
  label: string;
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** A stored key as a lookup needs it: the hash to compare and whether it still counts. */
export interface ApiKeyCandidate {
  id: string;
  projectId: string;
  hash: Buffer;
  revokedAt: Date | null;
}

/** Where projects and API keys live (Postgres in production and tests). */
export interface ProjectStore {
  /** @throws IllegalStateError when the name is taken. */
  createProject(project: { id: string; name: string }): Promise<ProjectRecord>;
  /** Creates the project unless one with that name exists; returns the stored one either way. */
  ensureProject(project: { id: string; name: string }): Promise<ProjectRecord>;
  listProjects(): Promise<ProjectRecord[]>;
  /** By id or by name. */
  findProject(idOrName: string): Promise<ProjectRecord | undefined>;
  insertKey(key: { id: string; projectId: string; label: string; prefix: string; hash: Buffer }): Promise<ApiKeyRecord>;
  /** Stores the key if its hash is new; a revoked copy is made valid again. */
  upsertKey(key: { id: string; projectId: string; label: string; prefix: string; hash: Buffer }): Promise<void>;
  keysByPrefix(prefix: string): Promise<ApiKeyCandidate[]>;
  /** Marks the key revoked and tells every gateway; false when there is no such key. */
  revokeKey(keyId: string): Promise<boolean>;
  listKeys(projectId: string): Promise<ApiKeyRecord[]>;
}
