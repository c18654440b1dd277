/**
 * relational-db restarted under traffic (stopped, 2.5 s down, started): chat completions with one virtual key run back to back before,
 * during and after the restart; afterwards every completion answered 200 must have its spend row in Postgres
 * (the gateway holds the rows it could not write, spooling them to disk, and writes them once the database is
 * back). The restart is repeated until the gateway logged a failed spend write during one, so the check cannot
 * pass on a restart that never reached the spend path.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { logTail, waitHealthy } from "../create.js";
import { chatStatus, makeKey, type StackAccess, spendOf } from "./access.js";

/** What the traffic saw and what Postgres holds afterwards. */
export interface RestartOutcome {
  /** Answers by HTTP status (0: no answer), before, during and after the restart. */
  statuses: Record<"before" | "during" | "after", Record<number, number>>;
  /** Completions answered 200 in all. */
  answered: number;
  /** Spend rows of the key once they stopped growing (or the wait ran out). */
  rows: number;
  /**
   * Whether the gateway logged a failed spend write during the restart (its recorder's "spend write to Postgres
   * failed; rows kept and retried"): without one the restart did not reach the spend path.
   */
  writesFailed: boolean;
  /** How many restarts it took. */
  restarts: number;
}

/** How long relational-db stays stopped during a restart, ms: longer than the spend writer's 1 s interval. */
const DOWN_MS = 2500;

/** What the gateway's spend recorder logs when a write to Postgres fails (services/gateway/src/spend/recorder.ts). */
const WRITE_FAILED = "spend write to Postgres failed";

/**
 * Runs the traffic and the restart (repeated, up to `maxRestarts`, until a spend write failed during one), then
 * waits (up to `settleMs`) for the key's spend rows to reach the completions answered 200.
 * @throws Error when the key cannot be made or relational-db is not healthy again in time.
 */
export async function restartUnderTraffic(
  access: StackAccess,
  settleMs = 120_000,
  maxRestarts = 5,
): Promise<RestartOutcome> {
  const { docker, stack, log } = access;
  const alias = `restart-traffic-${Date.now()}`;
  const key = await makeKey(stack, alias);
  const statuses: RestartOutcome["statuses"] = { before: {}, during: {}, after: {} };
  let phase: keyof RestartOutcome["statuses"] = "before";
  let stop = false;
  const traffic = (async () => {
    while (!stop) {
      const status = await chatStatus(stack, key);
      const counts = statuses[phase];
      counts[status] = (counts[status] ?? 0) + 1;
      await sleep(50);
    }
  })();

  await sleep(3000);
  phase = "during";
  const since = Math.floor(Date.now() / 1000) - 1;
  // Postgres's fast shutdown and start take about a second and the gateway writes spend once a second, so a
  // plain `docker restart` often falls between two writes (5 misses in a row were seen). The restart is a stop,
  // a pause longer than the write interval, and a start; repeated (up to `maxRestarts`) until a write failed.
  let restarts = 0;
  let writesFailed = false;
  while (!writesFailed && restarts < maxRestarts) {
    log(`restarting relational-db: stop, ${DOWN_MS} ms down, start (traffic running)`);
    const container = docker.getContainer("relational-db");
    await container.stop({ t: 10 });
    await sleep(DOWN_MS);
    await container.start();
    restarts += 1;
    await sleep(3000);
    writesFailed = (await logTail(docker, "gateway", 10_000, since)).includes(WRITE_FAILED);
  }
  await waitHealthy(docker, "relational-db", 120_000);
  phase = "after";
  await sleep(5000);
  stop = true;
  await traffic;

  const answered = Object.values(statuses).reduce((n, counts) => n + (counts[200] ?? 0), 0);
  const deadline = Date.now() + settleMs;
  let rows = spendOf(access, alias).rows;
  while (rows < answered && Date.now() < deadline) {
    await sleep(2000);
    rows = spendOf(access, alias).rows;
  }
  log(
    `restart under traffic: ${restarts} restart(s); ${JSON.stringify(statuses)}; ${answered} answered 200, ${rows} spend rows; spend writes ${writesFailed ? "failed during a restart and were retried" : "never failed"}`,
  );
  return { statuses, answered, rows, writesFailed, restarts };
}
