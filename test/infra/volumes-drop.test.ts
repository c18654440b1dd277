/**
 * `platform:dropVolumesOnDestroy: true`: the operator asks `pulumi destroy` to delete the data volumes too
 * (no retainOnDelete), and the stack config loader reads the flag as a boolean.
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import { installMocks, type MockedRun, retainOnDelete, runPlatform } from "./harness.js";

let run: MockedRun;

beforeAll(async () => {
  await installMocks("local");
  pulumi.runtime.setAllConfig({ "platform:dropVolumesOnDestroy": "true" });
  const { loadConfig } = await import("../../infra/config.js");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const config = loadConfig(`${REPO_ROOT}.env.example`);
  expect(config.stack.dropVolumesOnDestroy).toBe(true);
  run = await runPlatform(config);
});

describe("dropVolumesOnDestroy", () => {
  it("is off unless set", async () => {
    const { parseConfig, PlatformConfigError } = await import("../../infra/config.js");
    const env = parseDotenv(
      readFileSync(`${(await import("../../infra/files.js")).REPO_ROOT}.env.example`, "utf8"),
    );
    expect(parseConfig({}, env).stack.dropVolumesOnDestroy).toBe(false);
    expect(() => parseConfig({ dropVolumesOnDestroy: "yes" }, env)).toThrow(PlatformConfigError);
  });

  it("lets pulumi destroy delete every data volume", () => {
    const volumes = run.registered.filter((r) => r.type === "docker:index/volume:Volume");
    expect(volumes.length).toBeGreaterThanOrEqual(5);
    for (const v of volumes) expect(retainOnDelete(v.name), `${v.name} retainOnDelete`).toBe(false);
  });
});
