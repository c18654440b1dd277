/**
 * Data volumes outlive `pulumi destroy` (retainOnDelete): the databases, traces and dashboards keep their data
 * until the operator drops the volumes (`scripts/platform.sh destroy --volumes`). Under Pulumi's mocks the
 * resource options are not passed to the mocks, so this reads them off the registration requests the mock
 * monitor receives.
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import { installMocks, type MockedRun, runPlatform, stackSettings } from "./harness.js";

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getRetainondelete(): boolean;
}

const retained = new Map<string, boolean>();
let run: MockedRun;

beforeAll(async () => {
  await installMocks("local");
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    registerResource(req: RegisterRequest, callback: unknown): unknown;
  };
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, callback) => {
    if (req.getType() === "docker:index/volume:Volume") retained.set(req.getName(), req.getRetainondelete());
    return register(req, callback);
  };
  const { parseConfig } = await import("../../infra/config.js");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  run = await runPlatform(parseConfig(await stackSettings("local"), env));
});

describe("data volumes", () => {
  it("every volume a container mounts is a stack volume kept on destroy", () => {
    const volumes = run.registered.filter((r) => r.type === "docker:index/volume:Volume");
    expect(volumes.length).toBeGreaterThanOrEqual(5);
    for (const v of volumes) expect(retained.get(v.name), `${v.name} retainOnDelete`).toBe(true);
    const names = new Set(volumes.map((v) => String(v.inputs.name)));
    for (const c of run.containers.values())
      for (const mount of c.volumes)
        expect(names.has(mount.volumeName), `${c.name} ${mount.volumeName}`).toBe(true);
    for (const name of names) expect(name).toMatch(/^platform-/);
  });
});
