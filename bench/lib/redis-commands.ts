/**
 * Redis commands per request: the call counts of Redis `INFO commandstats` (`cmdstat_<name>:calls=<n>,…`,
 * https://redis.io/docs/latest/commands/info/) read before and after a run. The counts are the whole server's:
 * every client of a shared Redis (other gateways idling, other users of the machine) counts too, so the figure
 * is exact only on a Redis nobody else is using.
 */
import { Redis } from "ioredis";

/** Calls per command name (lowercase, e.g. `evalsha`, `publish`, `client|setname`). */
export type CommandCounts = Record<string, number>;

/** Parses the text of `INFO commandstats` into calls per command. Lines of other sections are ignored. */
export function parseCommandStats(info: string): CommandCounts {
  const out: CommandCounts = {};
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:\s]+):calls=(\d+)/gm)) {
    out[name!] = Number(calls);
  }
  return out;
}

/**
 * `after − before` per command, leaving out commands with no calls in between, and the commands this benchmark's
 * own reader sends (`info`).
 */
export function commandsBetween(before: CommandCounts, after: CommandCounts): CommandCounts {
  const out: CommandCounts = {};
  for (const [name, calls] of Object.entries(after)) {
    const delta = calls - (before[name] ?? 0);
    if (delta > 0 && name !== "info") out[name] = delta;
  }
  return out;
}

/** Reads the command counts of one Redis server. */
export interface CommandCounter {
  read(): Promise<CommandCounts>;
  close(): Promise<void>;
}

/**
 * A connection that reads `INFO commandstats`.
 * @throws when Redis cannot be reached at `url`.
 */
export async function commandCounter(url: string): Promise<CommandCounter> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on("error", () => {});
  await client.connect();
  return {
    read: async () => parseCommandStats(await client.info("commandstats")),
    async close() {
      client.disconnect();
    },
  };
}
