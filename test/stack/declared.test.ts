/**
 * The stack rehearsal's collector (test/stack/declared.ts): what it reads off the mocked program must be exactly
 * what the program declared, in an order that creates every container after its dependencies.
 */
import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import { IMAGES } from "../../infra/images.js";
import {
  dependenciesOf,
  installMocks,
  type MockedRun,
  runPlatform,
  stackSettings,
} from "../infra/harness.js";
import { creationOrder, type DeclaredContainer, describeStack, type StackDescription } from "./declared.js";

let run: MockedRun;
let stack: StackDescription;

beforeAll(async () => {
  await installMocks("local");
  const { parseConfig } = await import("../../infra/config.js");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  run = await runPlatform(parseConfig(await stackSettings("local"), env));
  stack = describeStack(run.registered, dependenciesOf, (name) => run.containers.get(name)?.urn);
});

function declared(name: string): DeclaredContainer {
  const c = stack.containers.find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name}`);
  return c;
}

describe("describeStack on the local stack", () => {
  it("has every container, the network and every volume the program registered", () => {
    expect(stack.containers.map((c) => c.name).sort()).toEqual([...run.containers.keys()].sort());
    expect(stack.networks).toEqual([{ name: "platform", driver: "bridge", attachable: true }]);
    const volumeNames = run.registered
      .filter((r) => r.type === "docker:index/volume:Volume")
      .map((r) => r.inputs.name);
    expect(stack.volumes.map((v) => v.name)).toEqual(volumeNames);
    expect(stack.volumes.length).toBeGreaterThan(0);
  });

  it("passes every container input through unchanged", () => {
    for (const c of stack.containers) {
      const view = run.containers.get(c.name);
      if (!view) throw new Error(`no view of ${c.name}`);
      const env = Object.fromEntries(
        c.env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
      );
      expect(env, c.name).toEqual(view.env);
      expect(c.command, c.name).toEqual(view.command);
      expect(c.ports, c.name).toEqual(view.ports);
      expect(c.volumes, c.name).toEqual(view.volumes);
      expect(c.uploads, c.name).toEqual(view.uploads);
      expect(c.networks, c.name).toEqual(view.networksAdvanced);
      expect(c.healthcheck?.tests, c.name).toEqual(view.healthcheck?.tests);
      expect(c.memoryMb, c.name).toBe(view.memory);
      expect(c.restart, c.name).toBe(view.restart);
    }
  });

  it("resolves a pulled image to the reference the program pulls, a built one to its tag and Dockerfile", () => {
    expect(declared("relational-db").image).toEqual({ kind: "pulled", ref: IMAGES.postgres.ref });
    expect(declared("cache").image).toEqual({ kind: "pulled", ref: IMAGES.redis.ref });
    const gateway = declared("gateway").image;
    expect(gateway.kind).toBe("built");
    if (gateway.kind !== "built") return;
    expect(gateway.ref).toMatch(/^platform\/gateway:/);
    expect(gateway.dockerfile).toMatch(/services\/gateway\/Dockerfile$/);
  });

  it("marks one-shot containers and the ones pulumi up waits on until healthy", () => {
    expect(stack.containers.filter((c) => c.oneShot).map((c) => c.name)).toEqual(["object-store-init"]);
    for (const name of ["relational-db", "document-db", "cache"])
      expect(declared(name).waitHealthySeconds, name).toBeGreaterThan(0);
    expect(declared("gateway").waitHealthySeconds).toBeUndefined();
  });

  it("orders every container after the containers it depends on", () => {
    const position = new Map(stack.containers.map((c, i) => [c.name, i]));
    for (const c of stack.containers)
      for (const dep of c.dependsOn)
        expect(position.get(dep), `${c.name} after ${dep}`).toBeLessThan(position.get(c.name) ?? -1);
    expect(declared("gateway").dependsOn).toEqual(expect.arrayContaining(["relational-db", "cache"]));
    expect(declared("object-store-init").dependsOn).toContain("object-store");
  });
});

describe("creationOrder", () => {
  const c = (name: string, dependsOn: string[] = []) => ({ name, dependsOn }) as DeclaredContainer;

  it("puts dependencies first and keeps declaration order otherwise", () => {
    expect(creationOrder([c("app", ["db"]), c("other"), c("db")]).map((x) => x.name)).toEqual([
      "db",
      "app",
      "other",
    ]);
  });

  it("refuses a cycle and an undeclared dependency", () => {
    expect(() => creationOrder([c("a", ["b"]), c("b", ["a"])])).toThrow(/cycle: a → b → a/);
    expect(() => creationOrder([c("a", ["ghost"])])).toThrow(/a depends on ghost/);
  });
});
