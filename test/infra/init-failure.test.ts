/**
 * A failed bucket creation fails the `up`: the provider reports object-store-init's exit code (attach, no
 * mustRun) without failing, so the program turns a non-zero code into an error of the value the trace viewer's
 * containers take. Here the mocked engine reports exit code 1. Pulumi's Node.js language host fails the program
 * on an unhandled rejection (how an error inside an output reaches it); this test collects those instead.
 */
import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installMocks, registrations, stackSettings } from "./harness.js";

const rejections: unknown[] = [];
const collect = (reason: unknown) => rejections.push(reason);
let vitestListeners: NodeJS.UnhandledRejectionListener[] = [];

beforeAll(() => {
  vitestListeners = process.listeners("unhandledRejection");
  process.removeAllListeners("unhandledRejection");
  process.on("unhandledRejection", collect);
});

afterAll(() => {
  process.off("unhandledRejection", collect);
  for (const listener of vitestListeners) process.on("unhandledRejection", listener);
});

describe("object-store-init exiting non-zero", () => {
  it("fails the program naming the container and how to retry, and creates no trace viewer", async () => {
    await installMocks("local", (type, _name, inputs) =>
      type === "docker:index/container:Container" && inputs.name === "object-store-init"
        ? { exitCode: 1 }
        : undefined,
    );
    const { parseConfig } = await import("../../infra/config.js");
    const { REPO_ROOT } = await import("../../infra/files.js");
    const { buildPlatform } = await import("../../infra/platform.js");
    const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
    buildPlatform(parseConfig(await stackSettings("local"), env));

    const registeredContainer = (name: string) =>
      registrations().some((r) => r.type === "docker:index/container:Container" && r.inputs.name === name);
    await expect.poll(() => rejections.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => registeredContainer("gateway"), { timeout: 10_000 }).toBe(true);
    const messages = rejections.map((r) => String(r instanceof Error ? r.message : r));
    expect(messages.join("\n")).toMatch(
      /object-store-init exited with code 1: bucket langfuse was not created.*docker logs object-store-init.*docker rm object-store-init.*pulumi up --refresh/s,
    );
    expect(registeredContainer("object-store-init")).toBe(true);
    expect(registeredContainer("trace-web")).toBe(false);
    expect(registeredContainer("trace-worker")).toBe(false);
  });
});
