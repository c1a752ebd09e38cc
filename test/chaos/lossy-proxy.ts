import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import type { Rng } from "../../src/sim/rng.js";

/**
 * A proxy in front of the emulator that loses Druid's answer to some task submissions: the request is
 * forwarded, Druid accepts the task, and the client's connection is then destroyed — the client never
 * learns that its task exists (the case pinned task ids and the duplicate-id reattach are for).
 */
export interface LossyProxy {
  url: string;
  /** Submissions whose answer was lost. */
  lost: number;
  close(): Promise<void>;
}

export async function startLossyProxy(target: string, rng: Rng, rate: number): Promise<LossyProxy> {
  const state: LossyProxy = { url: "", lost: 0, close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && k !== "host" && k !== "connection" && k !== "content-length")
        headers[k] = v;
    }
    try {
      const answer = await request(`${target}${req.url ?? "/"}`, {
        method: (req.method ?? "GET") as "GET",
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      // Bytes as they came: a gzipped answer (Druid's and the emulator's, for a client that accepts it) is binary.
      const text = Buffer.from(await answer.body.arrayBuffer());
      const submit = req.method === "POST" && req.url === "/druid/indexer/v1/task";
      if (submit && answer.statusCode === 200 && rng.next() < rate) {
        state.lost++;
        res.destroy();
        return;
      }
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(answer.headers))
        if (typeof v === "string" && k !== "transfer-encoding" && k !== "connection") out[k] = v;
      res.writeHead(answer.statusCode, out).end(text);
    } catch {
      res.destroy(); // the emulator is restarting: the client sees a reset, as from a Router
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
