import { existsSync, readdirSync, readFileSync } from "node:fs";

/**
 * Another process's CPU time and memory, read from outside through Linux's /proc: nothing runs in the
 * measured process, and the figures cover all of its threads (libuv's pool, V8's GC and compiler threads).
 */

/** Clock ticks per second of `/proc/PID/stat` (`getconf CLK_TCK`; 100 on every Linux kernel since 2.6). */
export const CLK_TCK = 100;

export interface ProcSample {
  /** user + system CPU time, ms (tick resolution: 10 ms). */
  cpuMs: number;
  /** Resident set now, bytes. */
  rssBytes: number;
  /** Peak resident set since the process started (VmHWM), bytes. */
  hwmBytes: number;
  threads: number;
  /** Open file descriptors (sockets included). */
  fds: number;
}

export function procAvailable(pid: number): boolean {
  return existsSync(`/proc/${pid}/stat`) && existsSync(`/proc/${pid}/status`);
}

export function sampleProc(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(rest[11]) + Number(rest[12]); // fields 14 (utime) and 15 (stime)
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  let fds = Number.NaN;
  try {
    fds = readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    // Not ours to read: leave it unknown.
  }
  return {
    cpuMs: (ticks * 1000) / CLK_TCK,
    rssBytes: kb("VmRSS") * 1024,
    hwmBytes: kb("VmHWM") * 1024,
    threads: Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN),
    fds,
  };
}

/** The soft and hard `RLIMIT_NOFILE` of this process (children inherit them); null off Linux. */
export function openFileLimit(): { soft: number; hard: number } | null {
  try {
    const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!line) return null;
    const value = (s: string | undefined) => (s === "unlimited" ? Number.POSITIVE_INFINITY : Number(s));
    return { soft: value(line[1]), hard: value(line[2]) };
  } catch {
    return null;
  }
}
