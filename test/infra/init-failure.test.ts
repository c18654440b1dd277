/**
 * A failed bucket creation fails the `up`: the provider reports object-store-init's exit code (attach, no
 * mustRun) without failing, so the program turns a non-zero code into an error of the value the trace viewer's
 * containers take. Here the mocked engine reports exit code 1. Pulumi's Node.js language host fails the program
 * on an unhandled rejection (how an error inside an output reaches it); this test collects those instead.
 */
import { describe, expect, it } from "vitest";
import { collectProgramErrors, declareLocalStack, installMocks, registrations } from "./harness.js";

const errors = collectProgramErrors();

describe("object-store-init exiting non-zero", () => {
  it("fails the program naming the container and how to retry, and creates no trace viewer", async () => {
    await installMocks("local", (type, _name, inputs) =>
      type === "docker:index/container:Container" && inputs.name === "object-store-init"
        ? { exitCode: 1 }
        : undefined,
    );
    await declareLocalStack();

    const registeredContainer = (name: string) =>
      registrations().some((r) => r.type === "docker:index/container:Container" && r.inputs.name === name);
    await expect.poll(() => errors().length, { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => registeredContainer("gateway"), { timeout: 10_000 }).toBe(true);
    const messages = errors();
    expect(messages.join("\n")).toMatch(
      /object-store-init exited with code 1: bucket langfuse was not created.*docker logs object-store-init.*docker rm object-store-init.*pulumi up --refresh/s,
    );
    expect(registeredContainer("object-store-init")).toBe(true);
    expect(registeredContainer("trace-web")).toBe(false);
    expect(registeredContainer("trace-worker")).toBe(false);
  });
});
