/**
 * Workers of one gateway (GATEWAY_WORKERS > 1) share the spool folder and replay it at the same moment: every
 * row a dead process left is replayed by exactly one of them, and a row claimed by a worker that died before
 * writing it is replayed by the next start.
 */
import { mkdtempSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SpendSpool } from "../../../../services/gateway/src/spend/spool.js";
import { captureLogger } from "../../../helpers/redis.js";
import { spendRow } from "../store/harness.js";

/** A pid above Linux's pid_max: never a live process. */
const DEAD_PID = 999_999_999;

describe("spend spool shared by workers", () => {
  it("two spools replaying one folder together replay every segment of a dead process exactly once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-spool-claim-"));
    const expected: string[] = [];
    for (let segment = 1; segment <= 20; segment++) {
      const rows = [spendRow({ spend: 0.25 }), spendRow({ spend: 0.5 })];
      expected.push(...rows.map((r) => r.requestId));
      const text = rows.map((r) => JSON.stringify(r)).join("\n");
      writeFileSync(join(dir, `spend-${DEAD_PID}-0a1b-${segment}.jsonl`), `${text}\n`);
    }
    const [a, b] = await Promise.all([
      new SpendSpool(dir, captureLogger()).replay(),
      new SpendSpool(dir, captureLogger()).replay(),
    ]);
    const replayed = [...a, ...b].flatMap((s) => s.rows.map((r) => r.requestId));
    expect(replayed.sort()).toEqual([...expected].sort());
  });

  it("a segment claimed by a process that died before writing its rows is replayed by the next start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-spool-claim-"));
    const row = spendRow({ spend: 0.125 });
    writeFileSync(join(dir, `spend-${DEAD_PID}-0a1b-1.jsonl`), `${JSON.stringify(row)}\n`);
    const claimed = await new SpendSpool(dir, captureLogger()).replay();
    expect(claimed.map((s) => s.rows.length)).toEqual([1]);
    // The claim is a segment of the claiming process; once that process is gone, its segment is a dead one.
    const [file] = readdirSync(dir);
    expect(file).toMatch(new RegExp(`^spend-${process.pid}-`));
    const orphan = (file as string).replace(`spend-${process.pid}-`, `spend-${DEAD_PID}-`);
    renameSync(join(dir, file as string), join(dir, orphan));
    const next = await new SpendSpool(dir, captureLogger()).replay();
    expect(next.flatMap((s) => s.rows.map((r) => r.requestId))).toEqual([row.requestId]);
  });
});
