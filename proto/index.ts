export * from "./events";
export * from "./gen/index";
