import { randomBytes as nodeRandomBytes, randomUUID } from "node:crypto";
import { InvalidArgumentError, NotFoundError } from "@bas/errors";
import { displayPrefix, hashApiKey, looksLikeApiKey, newApiKey } from "../domain/api-key";
import type { ApiKeyRecord, ProjectRecord, ProjectStore } from "./project-store";

/** The project that `BOOTSTRAP_API_KEY` belongs to. */
export const DEFAULT_PROJECT_NAME = "default";

export interface ProjectAdminDeps {
  store: ProjectStore;
  newId?: () => string;
  randomBytes?: (n: number) => Uint8Array;
  /** Called after a key is revoked here, so this process forgets it at once. */
  onRevoked?: (keyId: string) => void;
}

export interface ProjectAdmin {
  createProject(name: string): Promise<ProjectRecord>;
  listProjects(): Promise<ProjectRecord[]>;
  /** A project by id or name; NotFoundError when there is none. */
  getProject(idOrName: string): Promise<ProjectRecord>;
  /** The plain key is in the result and nowhere else: it cannot be shown again. */
  createApiKey(project: string, label?: string): Promise<{ key: ApiKeyRecord; plainKey: string }>;
  revokeApiKey(keyId: string): Promise<void>;
  listApiKeys(project: string): Promise<ApiKeyRecord[]>;
  /** Makes `plainKey` valid for the default project (created if missing). */
  ensureBootstrapKey(plainKey: string): Promise<ProjectRecord>;
}

const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/;

/** Projects and API keys: the use cases behind the ProjectAdmin gRPC service and the CLI. */
export function createProjectAdmin(deps: ProjectAdminDeps): ProjectAdmin {
  const { store } = deps;
  const newId = deps.newId ?? randomUUID;
  const random = deps.randomBytes ?? nodeRandomBytes;

  async function project(idOrName: string): Promise<ProjectRecord> {
    const found = idOrName ? await store.findProject(idOrName) : undefined;
    if (!found) throw new NotFoundError("Project not found");
    return found;
  }

  return {
    async createProject(name) {
      const trimmed = name.trim();
      if (!PROJECT_NAME.test(trimmed))
        throw new InvalidArgumentError("A project name is 1-100 letters, digits, spaces, '.', '_' or '-'", {
          field: ["name"],
        });
      return store.createProject({ id: newId(), name: trimmed });
    },

    listProjects: () => store.listProjects(),
    getProject: project,

    async createApiKey(projectRef, label = "") {
      const owner = await project(projectRef);
      const plainKey = newApiKey(random);
      const key = await store.insertKey({
        id: newId(),
        projectId: owner.id,
        label: label.slice(0, 200),
        prefix: displayPrefix(plainKey),
        hash: hashApiKey(plainKey),
      });
      return { key, plainKey };
    },

    async revokeApiKey(keyId) {
      if (!(await store.revokeKey(keyId))) throw new NotFoundError("API key not found");
      deps.onRevoked?.(keyId);
    },

    async listApiKeys(projectRef) {
      return store.listKeys((await project(projectRef)).id);
    },

    async ensureBootstrapKey(plainKey) {
      if (!looksLikeApiKey(plainKey)) throw new InvalidArgumentError("BOOTSTRAP_API_KEY must start with bas_");
      const owner = await store.ensureProject({ id: newId(), name: DEFAULT_PROJECT_NAME });
      await store.upsertKey({
        id: newId(),
        projectId: owner.id,
        label: "bootstrap",
        prefix: displayPrefix(plainKey),
        hash: hashApiKey(plainKey),
      });
      return owner;
    },
  };
}
