export * from "./issues.js";
export * from "./load.js";
export * from "./msq.js";
export * from "./options.js";
export * from "./prepare.js";
export { DIMENSION_TYPES } from "./schema.js";
export * from "./template.js";
export * from "./validate.js";
