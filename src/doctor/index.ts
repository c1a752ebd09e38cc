export { formatReport } from "./format.js";
export { lintTemplate, templateDataSource } from "./lints.js";
export { API_PROBES, type ApiProbe, UNTRIED_WRITES } from "./probes.js";
export type { DoctorReport, Finding, PermissionResult, Severity } from "./report.js";
export { type DoctorInput, runDoctor } from "./run.js";
