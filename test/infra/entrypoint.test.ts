/**
 * The program as Pulumi runs it: Pulumi.yaml's runtime settings, and infra/index.ts reading the stack config
 * through `pulumi.Config` (mocked engine, config set as the CLI would).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../../infra/files.js";
import { installMocks, registrations } from "./harness.js";

let program: typeof import("../../infra/index.js");

beforeAll(async () => {
  await installMocks("vm");
  pulumi.runtime.setAllConfig({
    "platform:target": "vm",
    "platform:dockerHost": "ssh://deploy@vm.example.org",
    "platform:domain": "ai.example.org",
    "platform:platforms": JSON.stringify({ chat: "linux/amd64" }),
    "platform:traceWorkerMemoryMb": "2048",
    "platform:gatewayWorkers": "2",
  });
  program = await import("../../infra/index.js");
});

describe("Pulumi.yaml", () => {
  it("runs infra/ with Node.js through tsx (ESM TypeScript)", () => {
    const project = parse(readFileSync(`${REPO_ROOT}Pulumi.yaml`, "utf8"));
    expect(project).toMatchObject({
      name: "platform",
      main: "infra/",
      runtime: { name: "nodejs", options: { typescript: false, nodeargs: "--import tsx" } },
    });
    const infraPackage = JSON.parse(readFileSync(`${REPO_ROOT}infra/package.json`, "utf8"));
    expect(infraPackage).toMatchObject({ type: "module", main: "index.ts" });
    expect(() => createRequire(`${REPO_ROOT}package.json`).resolve("tsx")).not.toThrow();
  });
});

describe("infra/index.ts", () => {
  it("reads the stack config through pulumi.Config and exports the URLs and logins", async () => {
    expect(program.urls.chat).toBe("https://chat.ai.example.org");
    expect(program.urls.gatewayApi).toBe("https://gateway.ai.example.org/v1");
    expect(await pulumi.isSecret(program.traceLogin)).toBe(true);
    expect(await pulumi.isSecret(program.dashboardsLogin)).toBe(true);
    expect(await pulumi.isSecret(program.gatewayMasterKey)).toBe(true);
  });

  it("hands the config's docker host, platforms, memory caps and gateway workers to the resources", async () => {
    await new Promise<void>((done) => program.traceLogin.apply(() => done()));
    const containerNamed = (name: string) =>
      registrations().find((r) => r.type === "docker:index/container:Container" && r.inputs.name === name);
    await expect.poll(() => containerNamed("trace-worker")).toBeDefined();
    const provider = registrations().find((r) => r.type === "pulumi:providers:docker");
    expect(provider?.inputs.host).toBe("ssh://deploy@vm.example.org");
    expect(containerNamed("trace-worker")?.inputs.memory).toBe(2048);
    await expect.poll(() => containerNamed("gateway")?.inputs.envs).toContain("GATEWAY_WORKERS=2");
    await expect.poll(() => containerNamed("chat")?.inputs.platform).toBe("linux/amd64");
    await expect.poll(() => containerNamed("reverse-proxy")).toBeDefined();
  });
});
