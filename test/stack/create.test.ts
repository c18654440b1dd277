/**
 * The rehearsal's translation of a declared container into the Engine API's create body (./create.ts): every
 * declared input must reach Docker unchanged, so a wrong value in infra/ reaches the running container.
 */
import { describe, expect, it } from "vitest";
import { createOptions, goDurationNs, tarOf } from "./create.js";
import type { DeclaredContainer } from "./declared.js";

const declared: DeclaredContainer = {
  name: "gateway",
  image: { kind: "pulled", ref: "example/gateway:1" },
  env: ["A=1", "B=x=y"],
  command: ["serve", "--port", "4000"],
  user: "1000:1000",
  networks: [{ name: "platform", aliases: ["gateway"] }],
  ports: [{ internal: 4000, external: 4001, ip: "127.0.0.1", protocol: "tcp" }],
  volumes: [{ volumeName: "platform-gateway-data", containerPath: "/data" }],
  uploads: [],
  healthcheck: {
    tests: ["CMD", "true"],
    interval: "30s",
    timeout: "1m30s",
    startPeriod: "500ms",
    retries: 5,
  },
  memoryMb: 512,
  restart: "unless-stopped",
  ulimits: [{ name: "nofile", soft: 1024, hard: 2048 }],
  logDriver: "json-file",
  logOpts: { "max-size": "10m" },
  oneShot: false,
  dependsOn: [],
};

describe("createOptions", () => {
  it("passes every declared input to the Engine API", () => {
    const body = createOptions(declared);
    expect(body).toMatchObject({
      name: "gateway",
      Image: "example/gateway:1",
      Env: ["A=1", "B=x=y"],
      Cmd: ["serve", "--port", "4000"],
      User: "1000:1000",
      ExposedPorts: { "4000/tcp": {} },
      Healthcheck: { Test: ["CMD", "true"], Interval: 30e9, Timeout: 90e9, StartPeriod: 5e8, Retries: 5 },
      NetworkingConfig: { EndpointsConfig: { platform: { Aliases: ["gateway"] } } },
    });
    expect(body.HostConfig).toEqual({
      PortBindings: { "4000/tcp": [{ HostIp: "127.0.0.1", HostPort: "4001" }] },
      Mounts: [{ Type: "volume", Source: "platform-gateway-data", Target: "/data" }],
      Memory: 512 * 1024 * 1024,
      RestartPolicy: { Name: "unless-stopped" },
      Ulimits: [{ Name: "nofile", Soft: 1024, Hard: 2048 }],
      LogConfig: { Type: "json-file", Config: { "max-size": "10m" } },
      NetworkMode: "platform",
    });
  });

  it('maps restart "no" to Docker\'s empty policy and refuses a second network it cannot join at create', () => {
    expect(createOptions({ ...declared, restart: "no" }).HostConfig?.RestartPolicy).toEqual({ Name: "" });
    expect(() =>
      createOptions({ ...declared, networks: [...declared.networks, { name: "shared", aliases: [] }] }),
    ).toThrow(/declares 2/);
  });
});

describe("goDurationNs", () => {
  it("reads Go durations and refuses anything else", () => {
    expect(goDurationNs("1h2m3s")).toBe(3723e9);
    expect(goDurationNs("250ms")).toBe(25e7);
    expect(() => goDurationNs("30")).toThrow(/not a Go duration/);
    expect(() => goDurationNs("")).toThrow(/not a Go duration/);
  });
});

describe("tarOf", () => {
  it("writes each file at its path without the leading slash, with its owner", async () => {
    const tar = await tarOf([{ path: "/etc/app/config.yml", content: "a: 1\n", uid: 1000 }]);
    expect(tar.subarray(0, 100).toString("latin1").replace(/\0+$/, "")).toBe("etc/app/config.yml");
    expect(Number.parseInt(tar.subarray(108, 116).toString("latin1"), 8)).toBe(1000);
    expect(tar.subarray(512, 517).toString()).toBe("a: 1\n");
  });
});
