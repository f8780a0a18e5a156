import type { runner } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import { InvalidArgumentError } from "@bas/errors";
import type { RouteTable } from "../../domain/model-routes";
import type { ProviderKeyInfo, ProviderKeys } from "../pg/provider-keys";

export interface RunnerServerDeps {
  status(): { activeTasks: number; sessionIds: string[] };
  keys: ProviderKeys;
  /** Which provider a model value routes to (where its own key is looked up), and whether any endpoint serves it. */
  routes: Pick<RouteTable, "providerOf" | "serves" | "resolve">;
  log: HandlerLog;
}

const PROVIDER = /^[A-Za-z0-9_.-]{1,64}$/;

function required(value: string, field: string): string {
  if (!value?.trim()) throw new InvalidArgumentError(`${field} is required`, { field: [field] });
  return value.trim();
}

function provider(value: string | undefined): string {
  const name = value?.trim() || "default";
  if (!PROVIDER.test(name))
    throw new InvalidArgumentError("provider: letters, digits, '.', '_' and '-' only", { field: ["provider"] });
  return name;
}

const toProto = (k: ProviderKeyInfo): runner.ProviderKeyInfo => ({
  projectId: k.projectId,
  provider: k.provider,
  keyHint: k.keyHint,
  updatedAt: k.updatedAt,
});

/** The runner's operator API: status, and the projects' own provider keys. */
export function runnerServer(deps: RunnerServerDeps) {
  return unaryService(
    {
      getStatus: async (): Promise<runner.RunnerStatus> => deps.status(),
      setProviderKey: async (req: runner.SetProviderKeyRequest): Promise<runner.ProviderKeyInfo> => {
        const projectId = required(req.projectId, "projectId");
        const apiKey = required(req.apiKey, "apiKey");
        if (apiKey.length > 4_096 || /\s/.test(apiKey)) {
          throw new InvalidArgumentError("apiKey must be one word of at most 4096 characters", { field: ["apiKey"] });
        }
        return toProto(await deps.keys.set(projectId, provider(req.provider), apiKey));
      },
      deleteProviderKey: async (req: runner.DeleteProviderKeyRequest) => {
        await deps.keys.delete(required(req.projectId, "projectId"), provider(req.provider));
        return {};
      },
      listProviderKeys: async (req: runner.ListProviderKeysRequest): Promise<runner.ListProviderKeysResponse> => ({
        keys: (await deps.keys.list(required(req.projectId, "projectId"))).map(toProto),
      }),
      checkOwnKey: async (req: runner.CheckOwnKeyRequest): Promise<runner.CheckOwnKeyResponse> => {
        const projectId = required(req.projectId, "projectId");
        const name = deps.routes.providerOf(required(req.model, "model"));
        return { present: await deps.keys.has(projectId, name), provider: name };
      },
      checkModelRoute: async (req: runner.CheckModelRouteRequest): Promise<runner.CheckModelRouteResponse> => {
        const model = required(req.model, "model");
        const configured = deps.routes.serves(model);
        return { configured, reasoning: configured && deps.routes.resolve(model).reasoning };
      },
    },
    deps.log,
  );
}
