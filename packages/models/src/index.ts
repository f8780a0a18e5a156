export {
  createModelCatalog,
  DEFAULT_MODEL,
  DEFAULT_MODEL_CATALOG,
  loadModelCatalog,
  type ModelCatalog,
  type ModelEntry,
} from "./catalog";
