// The native-query conformance cases (native-cases.ts) against a live Druid, e.g. the real Druid 33.0.0 of
// scripts/druid/start. Opt-in (test/conformance/vitest.config.ts); the same cases run against the emulator in the
// default suite (test/sim/native-conformance.test.ts).
import { setTimeout as delay } from "node:timers/promises";
import { nativeConformanceSuite } from "./native-cases.js";
import { defaultDataDir } from "./support.js";

const url = process.env.SEGOPS_CONFORMANCE_URL;
// Fail the whole file at load time when no target is given: a missing service must never look like a pass.
if (!url) {
  throw new Error(
    "SEGOPS_CONFORMANCE_URL is not set: point it at a Druid (e.g. http://127.0.0.1:8888 from scripts/druid/start)",
  );
}

nativeConformanceSuite({
  name: `live Druid at ${url}`,
  url: () => url.replace(/\/+$/, ""),
  pause: () => delay(500),
  maxPolls: 180,
  giveUpAfterMs: 90_000,
  dataDir: defaultDataDir,
});
