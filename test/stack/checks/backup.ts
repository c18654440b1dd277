/**
 * `scripts/platform.sh backup` then `restore`, run as an operator runs them (DOCKER_HOST naming the rehearsal's
 * engine): a key with spend is backed up, then lost (revoked through the admin API, its spend rows deleted),
 * then restored; the key must work again and its spend rows and booked spend be those of the backup.
 *
 * The relational half is real (pg_dumpall and psql of Debian's PostgreSQL in the postgres stand-in). The Mongo
 * half runs against a stand-in: document-db's `mongodump` / `mongorestore` are the wire fake's (./stand-ins/
 * server.ts), which authenticate as the real tools do and copy the fake's data file, not MongoDB's archive.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { REPO_ROOT } from "../../../infra/files.js";
import { waitHealthy } from "../create.js";
import { chatStatus, gatewayOf, makeKey, type StackAccess, spendOf, sql } from "./access.js";

/** What the round trip saw at each step. */
export interface BackupOutcome {
  /** The key's spend before the backup, after the loss, and after the restore. */
  backedUp: ReturnType<typeof spendOf>;
  lost: ReturnType<typeof spendOf>;
  restored: ReturnType<typeof spendOf>;
  /** Completion status with the key after the loss (expected 401) and after the restore (expected 200). */
  statusLost: number;
  statusRestored: number;
  /** Sizes of the two files `backup` wrote, bytes. */
  files: Record<string, number>;
}

/**
 * Runs scripts/platform.sh with `args` against the rehearsal's engine.
 * @throws Error with its output when it exits non-zero.
 */
function platform(access: StackAccess, args: string[]): string {
  const r = spawnSync("bash", [path.join(REPO_ROOT, "scripts/platform.sh"), ...args], {
    env: { ...process.env, DOCKER_HOST: access.engine.host },
    encoding: "utf8",
    timeout: 300_000,
  });
  const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  access.log(`platform.sh ${args.join(" ")}:\n${output.trim()}`);
  if (r.status !== 0) throw new Error(`scripts/platform.sh ${args.join(" ")} exited ${r.status}:\n${output}`);
  return output;
}

/** Polls until the key's spend rows reach `rows` (up to 60 s). */
async function settled(
  access: StackAccess,
  alias: string,
  rows: number,
): Promise<ReturnType<typeof spendOf>> {
  let spend = spendOf(access, alias);
  for (let i = 0; i < 30 && spend.rows < rows; i++) {
    await sleep(2000);
    spend = spendOf(access, alias);
  }
  return spend;
}

/**
 * The round trip.
 * @throws Error when a completion before the backup fails, a platform.sh command fails, or the gateway is not
 * healthy after its restart.
 */
export async function backupRoundTrip(access: StackAccess): Promise<BackupOutcome> {
  const { stack, docker } = access;
  const alias = `backup-${Date.now()}`;
  const key = await makeKey(stack, alias);
  for (let i = 0; i < 3; i++) {
    const status = await chatStatus(stack, key);
    if (status !== 200) throw new Error(`a completion before the backup answered ${status}`);
  }
  const backedUp = await settled(access, alias, 3);

  const dir = mkdtempSync(path.join(tmpdir(), "stack-backup-"));
  try {
    platform(access, ["backup", dir]);
    const files = Object.fromEntries(
      ["relational-db.sql", "document-db.archive.gz"].map((f) => [f, statSync(path.join(dir, f)).size]),
    );

    const { url, masterKey } = gatewayOf(stack);
    const deleted = await fetch(`${url}/key/delete`, {
      method: "POST",
      headers: { authorization: `Bearer ${masterKey}`, "content-type": "application/json" },
      body: JSON.stringify({ keys: [key] }),
    });
    if (!deleted.ok) throw new Error(`POST /key/delete answered ${deleted.status}: ${await deleted.text()}`);
    sql(access, `DELETE FROM spend_logs WHERE key_alias = '${alias}'`);
    const statusLost = await chatStatus(stack, key);
    const lost = spendOf(access, alias);

    platform(access, ["restore", dir]);
    // As restore tells the operator: restart the services that cache data.
    platform(access, ["restart", "gateway"]);
    await waitHealthy(docker, "gateway", 240_000);
    const restored = spendOf(access, alias);
    const statusRestored = await chatStatus(stack, key);
    return { backedUp, lost, restored, statusLost, statusRestored, files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
