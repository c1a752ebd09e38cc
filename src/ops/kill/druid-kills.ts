import { type AutoKiller, coordinatorKiller, druidKillsNote, embeddedKiller } from "../../druid/auto-kill.js";
import type { DruidClient } from "../../druid/client.js";

/**
 * The auto-kills Druid runs (the Coordinator's duty, and from 34 the Overlord's embedded kill), read from each
 * service's `GET /status/properties`, and the line `segops kill` prints about them. A service whose properties cannot
 * be read, or that answers as a Router (one URL without the management proxy), counts as unknown: no line for it.
 */
export async function druidAutoKills(
  client: Pick<DruidClient, "statusProperties" | "capabilities">,
  signal?: AbortSignal,
): Promise<{ killers: AutoKiller[]; note: string | null }> {
  const read = async (service: "coordinator" | "overlord") => {
    try {
      const props = await client.statusProperties(service, signal ? { signal } : undefined);
      return /router/i.test(props["druid.service"] ?? "") ? null : props;
    } catch {
      return null;
    }
  };
  const [coordinator, overlord] = [await read("coordinator"), await read("overlord")];
  let major: number | undefined;
  try {
    major = (await client.capabilities()).behavesAs;
  } catch {
    major = undefined;
  }
  const killers = [
    coordinator === null ? null : coordinatorKiller(coordinator),
    overlord === null ? null : embeddedKiller(overlord, major),
  ].filter((k): k is AutoKiller => k !== null);
  return { killers, note: druidKillsNote(killers) };
}
