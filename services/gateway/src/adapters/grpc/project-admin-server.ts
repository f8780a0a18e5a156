import type { gateway } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import type { ApiKeyRecord, ProjectRecord } from "../../app/project-store";
import type { ProjectAdmin } from "../../app/project-admin";

const toProject = (p: ProjectRecord): gateway.Project => ({ id: p.id, name: p.name, createdAt: p.createdAt });
const toKey = (k: ApiKeyRecord): gateway.ApiKey => ({
  id: k.id,
  projectId: k.projectId,
  label: k.label,
  prefix: k.prefix,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt ?? undefined,
});

/** The ProjectAdmin gRPC service (gateway.proto) over the project use cases. */
export function projectAdminServer(admin: ProjectAdmin, log?: HandlerLog) {
  return unaryService(
    {
      createProject: async (req: gateway.CreateProjectRequest) => toProject(await admin.createProject(req.name)),
      listProjects: async () => ({ projects: (await admin.listProjects()).map(toProject) }),
      getProject: async (req: gateway.GetProjectRequest) => toProject(await admin.getProject(req.project)),
      createApiKey: async (req: gateway.CreateApiKeyRequest) => {
        const { key, plainKey } = await admin.createApiKey(req.projectId, req.label);
        return { key: toKey(key), plainKey };
      },
      revokeApiKey: async (req: gateway.RevokeApiKeyRequest) => {
        await admin.revokeApiKey(req.keyId);
        return {};
      },
      listApiKeys: async (req: gateway.ListApiKeysRequest) => ({
        keys: (await admin.listApiKeys(req.projectId)).map(toKey),
      }),
    },
    log,
  );
}
