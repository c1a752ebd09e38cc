import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

/** A PostgreSQL server for tests: a throwaway cluster, or the one named by `SEGOPS_TEST_PG_URL`. */
export interface TestPostgres {
  /** Connection URL of the server's `postgres` database. */
  readonly url: string;
  /** A URL whose `?schema=` is a fresh, unused schema: one per test keeps tests apart. */
  freshUrl(): string;
  /** Drops the schemas handed out (shared server) or stops and deletes the cluster (throwaway). */
  stop(): Promise<void>;
}

/** The newest Debian PostgreSQL server's bin directory. */
export function findBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const version = versions[0];
  if (version === undefined) {
    throw new Error(
      "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: install the `postgresql` Debian " +
        "package (scripts/provision.sh does), or set SEGOPS_TEST_PG_URL to a server the tests may use",
    );
  }
  return join(root, version, "bin");
}

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** initdb refuses to run as root: run the server binaries as the `postgres` OS user then. */
export function asServerUser(bin: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

let counter = 0;

export interface StartOptions {
  /** fsync on (real durability; for benchmarks). Tests run with fsync off for speed. @default false */
  readonly durable?: boolean;
}

/** Starts (or connects to) a PostgreSQL server for one test file; never skips: a missing server is an error. */
export async function startPostgres(options: StartOptions = {}): Promise<TestPostgres> {
  const schemas: string[] = [];
  const freshUrlOf = (url: string) => () => {
    const schema = `t${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
    schemas.push(schema);
    const u = new URL(url);
    u.searchParams.set("schema", schema);
    return u.toString();
  };

  const shared = process.env.SEGOPS_TEST_PG_URL;
  if (shared) {
    return {
      url: shared,
      freshUrl: freshUrlOf(shared),
      async stop() {
        const client = new pg.Client({ connectionString: shared });
        await client.connect();
        for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
        await client.end();
      },
    };
  }

  const bin = findBin();
  const dir = mkdtempSync(join(tmpdir(), "segops-pg-"));
  const data = join(dir, "data");
  if (process.getuid?.() === 0) {
    const ids = await run("id", ["-u", "postgres"]).then(
      async (u) => [Number(u.stdout), Number((await run("id", ["-g", "postgres"])).stdout)] as const,
    );
    chownSync(dir, ids[0], ids[1]);
  }
  const port = await freePort();
  const exec = (name: string, args: string[]) => {
    const [cmd, argv] = asServerUser(join(bin, name), args);
    return run(cmd, argv);
  };
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
    const settings = [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${dir}`,
      "-c max_connections=200",
      ...(options.durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
    ].join(" ");
    await exec("pg_ctl", [
      "start",
      "-w",
      "-t",
      "60",
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-o",
      settings,
    ]);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `could not start a throwaway PostgreSQL cluster with ${bin}: ${(error as Error).message}`,
    );
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    freshUrl: freshUrlOf(url),
    async stop() {
      await exec("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
