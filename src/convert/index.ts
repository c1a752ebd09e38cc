export { type Converted, convertHadoopSpec } from "./hadoop.js";
export { globOf } from "./input-source.js";
export { ConvertError, type ConvertNote } from "./notes.js";
