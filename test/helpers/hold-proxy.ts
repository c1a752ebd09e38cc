import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";

/**
 * A test proxy in front of the emulator that can freeze task submissions, to crash a client at exact
 * points: `before` holds `POST /task` without forwarding it (Druid never sees it); `after` forwards it
 * and holds Druid's answer (Druid has the task, the client never learns). Everything else passes.
 */
export type HoldMode = "pass" | "before" | "after";

export interface HoldProxy {
  url: string;
  mode: HoldMode;
  /** Submissions currently held. */
  held: number;
  close(): Promise<void>;
}

export async function startHoldProxy(target: string): Promise<HoldProxy> {
  const pending = new Set<ServerResponse>();
  const state: HoldProxy = { url: "", mode: "pass", held: 0, close: async () => {} };

  const forward = async (req: IncomingMessage, body: Buffer) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && k !== "host" && k !== "connection" && k !== "content-length")
        headers[k] = v;
    }
    return request(`${target}${req.url ?? "/"}`, {
      method: (req.method ?? "GET") as "GET",
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
  };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const isSubmit = req.method === "POST" && req.url === "/druid/indexer/v1/task";
    if (isSubmit && state.mode === "before") {
      pending.add(res);
      state.held++;
      return;
    }
    try {
      const answer = await forward(req, body);
      // Bytes as they came: a gzipped answer (Druid's and the emulator's, for a client that accepts it) is binary.
      const text = Buffer.from(await answer.body.arrayBuffer());
      if (isSubmit && state.mode === "after") {
        pending.add(res);
        state.held++;
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(answer.headers))
        if (typeof v === "string" && k !== "transfer-encoding") headers[k] = v;
      res.writeHead(answer.statusCode, headers).end(text);
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const res of pending) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
