/**
 * What tests of code built on segops need: a clock that moves only when told, and the Druid emulator
 * (which runs on such a clock, so a test drives both sides with one).
 */
export { ManualClock } from "./core/clock.js";
export { type FaultRule, type SimHandle, type SimOptions, startSim } from "./sim/index.js";
