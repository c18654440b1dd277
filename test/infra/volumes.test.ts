/**
 * Data volumes outlive `pulumi destroy` (retainOnDelete): the databases, traces and dashboards keep their data
 * until the operator drops the volumes. The stack output `dataVolumes` names them for `docker volume rm`.
 */
import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import { installMocks, type MockedRun, retainOnDelete, runPlatform, stackSettings } from "./harness.js";

let run: MockedRun;

beforeAll(async () => {
  await installMocks("local");
  const { parseConfig } = await import("../../infra/config.js");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  run = await runPlatform(parseConfig(await stackSettings("local"), env));
});

describe("data volumes", () => {
  it("every volume a container mounts is a stack volume kept on destroy", () => {
    const volumes = run.registered.filter((r) => r.type === "docker:index/volume:Volume");
    expect(volumes.length).toBeGreaterThanOrEqual(5);
    for (const v of volumes) expect(retainOnDelete(v.name), `${v.name} retainOnDelete`).toBe(true);
    const names = new Set(volumes.map((v) => String(v.inputs.name)));
    for (const c of run.containers.values())
      for (const mount of c.volumes)
        expect(names.has(mount.volumeName), `${c.name} ${mount.volumeName}`).toBe(true);
    for (const name of names) expect(name).toMatch(/^platform-/);
  });

  it("lists every volume's name in the dataVolumes stack output, for `docker volume rm`", async () => {
    const names = run.registered
      .filter((r) => r.type === "docker:index/volume:Volume")
      .map((r) => String(r.inputs.name))
      .sort();
    const output = await run.value(run.platform.outputs.dataVolumes);
    expect(output).toEqual(names);
    for (const name of [
      "platform-relational-db-data",
      "platform-document-db-data",
      "platform-cache-data",
      "platform-analytics-db-data",
      "platform-object-store-data",
      "platform-metrics-data",
      "platform-dashboards-data",
      "platform-alertmanager-data",
      "platform-scanner-models",
    ])
      expect(output).toContain(name);
  });
});
