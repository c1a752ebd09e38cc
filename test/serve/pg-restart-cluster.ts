import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

import { asServerUser, findBin, freePort } from "../helpers/postgres.js";

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of one test's own (initdb on a temp dir, its own port), from the Debian packages'
 * binaries, that the test may stop and start again. Always a new cluster, even when `SEGOPS_TEST_PG_URL`
 * names a shared server: restarting that one would break every other test using it.
 */
export interface RestartablePostgres {
  /** The `postgres` database of the cluster, as its superuser (trust auth on 127.0.0.1). */
  readonly url: string;
  readonly port: number;
  /** Stops the server (`pg_ctl stop -m fast`: sessions terminated, as a restart does) and waits until it is down. */
  stopServer(): Promise<void>;
  /** Starts it again on the same port and data directory, and waits until it accepts connections. */
  startServer(): Promise<void>;
  /** Whether the server answers `pg_isready`. */
  isReady(): Promise<boolean>;
  /** Stops the server and deletes the cluster. */
  destroy(): Promise<void>;
}

export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const bin = findBin();
  const root = process.getuid?.() === 0;
  const exec = (name: string, args: string[]) => run(...asServerUser(join(bin, name), args));
  const dir = mkdtempSync(join(tmpdir(), "segops-pg-restart-"));
  if (root) {
    const uid = Number((await run("id", ["-u", "postgres"])).stdout);
    const gid = Number((await run("id", ["-g", "postgres"])).stdout);
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const port = await freePort();
  const settings = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c max_connections=200",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
  ].join(" ");
  const start = () =>
    exec("pg_ctl", ["start", "-w", "-t", "60", "-D", data, "-l", join(dir, "server.log"), "-o", settings]);
  try {
    await exec("initdb", [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "-E",
      "UTF8",
      "--no-sync",
      "--no-instructions",
    ]);
    await start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start a PostgreSQL cluster with ${bin}: ${(error as Error).message}`);
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stopServer() {
      await exec("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "60"]);
    },
    async startServer() {
      await start();
    },
    async isReady() {
      return exec("pg_isready", ["-h", "127.0.0.1", "-p", String(port), "-q"]).then(
        () => true,
        () => false,
      );
    },
    async destroy() {
      await exec("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
