export * from "./core/clock.js";
export * from "./core/errors.js";
