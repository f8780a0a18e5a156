import { DEFAULT_MODEL, type ModelCatalog } from "@bas/models";
import { createSessionBody } from "./create-session";
import { modelEnum } from "./enums";
import { sessionListResponse, sessionResponse } from "./session";

export type V3Schemas = ReturnType<typeof build>;

function build(models: ModelCatalog) {
  const model = modelEnum(models.ids);
  const fallback = models.entries.find((e) => e.kind === "tier")?.id ?? models.ids[0];
  const defaultModel = models.get(DEFAULT_MODEL) ? DEFAULT_MODEL : fallback;
  const session = sessionResponse(model);
  return {
    model,
    defaultModel,
    session,
    sessionList: sessionListResponse(session),
    createSessionBody: createSessionBody(model, defaultModel),
  };
}

const cache = new WeakMap<ModelCatalog, V3Schemas>();

/** The v3 schemas that depend on the configured model catalog, built once per catalog. */
export function v3Schemas(models: ModelCatalog): V3Schemas {
  let schemas = cache.get(models);
  if (!schemas) {
    schemas = build(models);
    cache.set(models, schemas);
  }
  return schemas;
}
