import { describe, expect, it } from "vitest";
import { commandsBetween, parseCommandStats } from "../../bench/lib/redis-commands.js";
import { redisPerRequest } from "../../bench/lib/report-sections.js";

// The shape of `INFO commandstats` as Redis 7 prints it.
const info = (evalsha: number, get: number) =>
  [
    "# Commandstats",
    `cmdstat_evalsha:calls=${evalsha},usec=100,usec_per_call=1.00,rejected_calls=0,failed_calls=0`,
    `cmdstat_get:calls=${get},usec=10,usec_per_call=0.10,rejected_calls=0,failed_calls=0`,
    "cmdstat_client|setname:calls=2,usec=1,usec_per_call=0.50,rejected_calls=0,failed_calls=0",
    "cmdstat_info:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0",
    "",
  ].join("\r\n");

describe("Redis commands per request", () => {
  it("parses the call count of every command, subcommands included", () => {
    expect(parseCommandStats(info(10, 30))).toEqual({ evalsha: 10, get: 30, "client|setname": 2, info: 7 });
  });

  it("keeps the commands sent in between, without the reader's own INFO", () => {
    const before = parseCommandStats(info(10, 30));
    const after = { ...parseCommandStats(info(210, 330)), info: 9, publish: 4 };
    expect(commandsBetween(before, after)).toEqual({ evalsha: 200, get: 300, publish: 4 });
  });

  it("renders commands per request, largest first, leaving out those under 0.01", () => {
    expect(redisPerRequest({ evalsha: 2000, get: 3000, ping: 1 }, 1000)).toBe(
      "5.00 (get 3.00, evalsha 2.00)",
    );
    expect(redisPerRequest(undefined, 100)).toBe("n/a");
    expect(redisPerRequest({}, 100)).toBe("0.00");
  });
});
