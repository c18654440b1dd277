/**
 * CPU time of every process a benchmarked request touches, so the report can say where a request's cost
 * lands: the load generator (this process), the upstream, the proxy or gateway, and, for the full pipeline,
 * Redis and the Postgres backends serving the gateway. All figures are CPU milliseconds (user + system).
 *
 * Sources: `/proc/<pid>/stat` fields 14 and 15 (`utime`, `stime`, in clock ticks of `getconf CLK_TCK`; proc(5)),
 * Redis `INFO cpu` (`used_cpu_user`, `used_cpu_sys`, seconds; https://redis.io/docs/latest/commands/info/) and
 * Postgres `pg_stat_activity.pid` for the backends connected to the gateway's database.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Redis } from "ioredis";
import pg from "pg";

/** Clock ticks per second of /proc's `utime`/`stime` (100 on Linux unless the kernel says otherwise). */
const ticksPerSecond = (() => {
  try {
    const n = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time a process has used so far, ms (resolution: one clock tick, 10 ms), or NaN when it has exited or
 * its /proc entry cannot be read.
 */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** One thing whose CPU time is read before and after a run. */
export interface CpuMeter {
  /** Column name in the report: `load generator`, `upstream`, `gateway`, `Redis`, `Postgres`, … */
  name: string;
  /** CPU ms used so far (NaN when unknown). */
  read(): Promise<number>;
  close?(): Promise<void>;
}

/**
 * Pids of `pid`'s descendants (children, grandchildren, …), from the parent pid (field 4) of every
 * `/proc/<n>/stat`: a gateway with `GATEWAY_WORKERS` runs its workers as child processes.
 */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/**
 * A child process (or this one, for `process.pid`) with its descendants summed in: CPU ms of the process and of
 * every descendant seen so far (a descendant that exited keeps its last reading, so totals never go backwards).
 */
export function processMeter(name: string, pid: number): CpuMeter {
  if (pid === process.pid) {
    return {
      name,
      read: async () => {
        const { user, system } = process.cpuUsage();
        return (user + system) / 1000;
      },
    };
  }
  const seen = new Map<number, number>();
  return {
    name,
    read: async () => {
      const own = processCpuMs(pid);
      for (const child of descendants(pid)) {
        const ms = processCpuMs(child);
        if (Number.isFinite(ms)) seen.set(child, ms);
      }
      let total = own;
      for (const ms of seen.values()) total += ms;
      return total;
    },
  };
}

/**
 * The Redis server, through `INFO cpu` (works whether or not its pid is visible from here).
 * @throws when Redis cannot be reached at `url`.
 */
export async function redisMeter(url: string): Promise<CpuMeter> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  let lastError: Error | undefined;
  client.on("error", (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw lastError ?? error;
  }
  return {
    name: "Redis",
    async read() {
      const info = await client.info("cpu");
      const field = (key: string) => Number(new RegExp(`^${key}:([0-9.]+)`, "m").exec(info)?.[1]);
      return (field("used_cpu_user") + field("used_cpu_sys")) * 1000;
    },
    async close() {
      client.disconnect();
    },
  };
}

/**
 * The Postgres backends connected to `databaseUrl`'s database and to the `more` databases (the gateways' pools;
 * this meter's own backend is left out), summed from /proc. Backends that exited between two reads are not counted; the gateway keeps its
 * pool open for the whole run, so that loses nothing in practice.
 * @throws when Postgres cannot be reached.
 */
export async function postgresMeter(databaseUrl: string, more: string[] = []): Promise<CpuMeter> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const names = [databaseUrl, ...more].map((url) => decodeURIComponent(new URL(url).pathname.slice(1)));
  const pids = new Map<number, number>();
  return {
    name: "Postgres",
    async read() {
      const { rows } = await client.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = ANY($1::text[]) AND pid <> pg_backend_pid()",
        [names],
      );
      // A backend seen before keeps its last reading if it cannot be read now, so totals never go backwards.
      for (const { pid } of rows) {
        const ms = processCpuMs(pid);
        if (Number.isFinite(ms)) pids.set(pid, ms);
      }
      if (pids.size === 0) return Number.NaN;
      let total = 0;
      for (const ms of pids.values()) total += ms;
      return total;
    },
    async close() {
      await client.end();
    },
  };
}

/** CPU ms each meter used between two calls: `const stop = await startCpu(meters); …; const used = await stop();`. */
export async function startCpu(meters: CpuMeter[]): Promise<() => Promise<Record<string, number>>> {
  const before = await Promise.all(meters.map((m) => m.read()));
  return async () => {
    const after = await Promise.all(meters.map((m) => m.read()));
    return Object.fromEntries(
      meters.map((m, i) => [m.name, (after[i] ?? Number.NaN) - (before[i] ?? Number.NaN)]),
    );
  };
}
