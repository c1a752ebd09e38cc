// The Broker SQL value-model cases (broker-sql-engine-cases.ts) against a live Druid, e.g. the real Druid 33.0.0 of
// scripts/druid/start. Opt-in: see test/conformance/vitest.config.ts. The same cases run against the emulator in
// the default suite (test/sim/broker-sql-engine-conformance.test.ts).
import { setTimeout as delay } from "node:timers/promises";
import { brokerSqlEngineConformanceSuite } from "./broker-sql-engine-cases.js";
import { defaultDataDir } from "./support.js";

const url = process.env.SEGOPS_CONFORMANCE_URL;
// Fail the whole file at load time when no target is given: a missing service must never look like a pass.
if (!url) {
  throw new Error(
    "SEGOPS_CONFORMANCE_URL is not set: point it at a Druid (e.g. http://127.0.0.1:8888 from scripts/druid/start)",
  );
}

brokerSqlEngineConformanceSuite({
  name: `live Druid at ${url}`,
  url: () => url.replace(/\/+$/, ""),
  // Ingestion and handoff take real time on a live cluster: poll every 500 ms, for up to 100 s.
  pause: () => delay(500),
  maxPolls: 360,
  giveUpAfterMs: 100_000,
  dataDir: defaultDataDir,
});
