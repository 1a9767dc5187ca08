export * from "./engine/index.js";
export * from "./client/index.js";
