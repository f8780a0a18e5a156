export { type Engine, findEngine, NoEngineError } from "./engine";
export { buildImages, imageOf, type Target, TARGETS, VERSION } from "./images";
