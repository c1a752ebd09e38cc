import type { DruidClient, DruidClientOptions } from "../druid/client.js";
import type { DruidGate } from "../druid/http.js";
import type { OutageMonitor } from "../druid/outage.js";
import { connectDruid } from "./context.js";
import type { DruidFlags } from "./options.js";

/**
 * A client for the flags that reports every attempt to `monitor` and shares its one backoff per host (the gate,
 * as `segops serve` does: while Druid does not answer, one probe per step and every other call refused before it
 * is sent). The start-up check (one cheap call, unless `check` is false) comes first with its own backoff bounded
 * by `--retry-budget`; the gate, which would refuse its attempts after three, starts with the run.
 */
export async function connectWatched(
  flags: DruidFlags,
  monitor: OutageMonitor,
  options: { check?: boolean; client?: Partial<DruidClientOptions> } = {},
): Promise<DruidClient> {
  let running = false;
  const gate: DruidGate = {
    admit: (call) => {
      if (running) monitor.admit(call);
    },
    giveUp: (call, error) => (running ? monitor.giveUp(call, error) : error),
  };
  const client = await connectDruid(flags, {
    ...(options.check === false ? { check: false } : {}),
    client: { ...options.client, onAttempt: monitor.record, gate },
  });
  running = true;
  return client;
}
