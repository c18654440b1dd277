/**
 * The vm stack (Pulumi.vm.yaml) under Pulumi mocks: ssh docker host, HTTPS reverse proxy with the shared-cookie
 * rewrite, app ports only on the VM's loopback, public URLs on the domain, arm64 platform overrides, registry
 * credentials and SHARED_NETWORK.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { container, installMocks, type MockedRun, runPlatform, stackSettings } from "./harness.js";

let run: MockedRun;
let settings: Record<string, unknown>;

beforeAll(async () => {
  await installMocks("vm");
  const { parseConfig } = await import("../../infra/config.js");
  settings = await stackSettings("vm");
  run = await runPlatform(
    parseConfig(
      { ...settings, platforms: { chat: "linux/amd64", console: "linux/amd64" }, registryUsername: "octo" },
      { REGISTRY_TOKEN: "ghp_token", SHARED_NETWORK: "apps-net", GATEWAY_MASTER_KEY: "sk-pinned-master" },
    ),
  );
});

describe("vm stack", () => {
  it("talks to the docker host over ssh, with the registry login for private images", () => {
    expect(settings.dockerHost).toMatch(/^ssh:\/\/[^@]+@.+/);
    const provider = run.registered.find((r) => r.type === "pulumi:providers:docker");
    expect(provider?.inputs.host).toBe(settings.dockerHost);
    const auth = JSON.parse(String(provider?.inputs.registryAuth));
    expect(auth).toEqual([{ address: "ghcr.io", username: "octo", password: "ghp_token" }]);
  });

  it("adds the reverse proxy, the only container published on every interface, on 80 and 443", () => {
    expect([...run.containers.keys()]).toContain("reverse-proxy");
    expect(run.containers.size).toBe(20);
    const proxy = container(run, "reverse-proxy");
    expect(proxy.ports.map((p) => `${p.ip}:${p.external}/${p.protocol}`).sort()).toEqual([
      "0.0.0.0:443/tcp",
      "0.0.0.0:443/udp",
      "0.0.0.0:80/tcp",
    ]);
    expect(proxy.healthcheck?.tests).toEqual([
      "CMD",
      "wget",
      "-q",
      "-O",
      "/dev/null",
      "http://127.0.0.1:8081/healthz",
    ]);
    expect(proxy.urn).toContain("platform:proxy:ReverseProxy$docker:index/container:Container");
    const apps = [...run.containers.values()].filter((c) => c.name !== "reverse-proxy");
    for (const c of apps) for (const p of c.ports) expect(p.ip, c.name).toBe("127.0.0.1");
    expect(apps.flatMap((c) => c.ports)).toHaveLength(7);
  });

  it("ships a Caddyfile that serves each public host and rewrites the chat's and console's cookies", () => {
    const caddyfile = container(run, "reverse-proxy").uploads.find(
      (u) => u.file === "/etc/caddy/Caddyfile",
    )?.content;
    expect(caddyfile).toContain("chat.example.com {\n\treverse_proxy chat:3080 {\n\t\timport shared_cookie");
    expect(caddyfile).toContain(
      "console.example.com {\n\trespond /metrics 404\n\treverse_proxy console:3001 {\n\t\timport shared_cookie",
    );
    expect(caddyfile).toContain(
      "gateway.example.com {\n\trespond /metrics 404\n\treverse_proxy gateway:4000\n}",
    );
    expect(caddyfile).toContain("trace.example.com {\n\treverse_proxy trace-web:3000\n}");
    expect(caddyfile).toContain("dashboards.example.com {\n\treverse_proxy dashboards:3000\n}");
    expect(caddyfile).toContain("; Domain=.example.com; SameSite=Lax");
    expect(caddyfile).toContain("email ops@example.com");
    // No site for Prometheus or Alertmanager; /metrics is only named to be refused.
    expect((caddyfile ?? "").replaceAll("respond /metrics 404", "")).not.toMatch(
      /metrics|alertmanager|9090|9093/,
    );
  });

  it("uses HTTPS URLs on the domain and the shared cookie domain", () => {
    expect(run.platform.outputs.urls).toMatchObject({
      chat: "https://chat.example.com",
      console: "https://console.example.com",
      gatewayApi: "https://gateway.example.com/v1",
      trace: "https://trace.example.com",
      dashboards: "https://dashboards.example.com",
      metrics: "http://localhost:9090",
    });
    expect(container(run, "console").env.COOKIE_DOMAIN).toBe(".example.com");
    expect(container(run, "chat").env.DOMAIN_CLIENT).toBe("https://chat.example.com");
    expect(container(run, "trace-web").env.NEXTAUTH_URL).toBe("https://trace.example.com");
    expect(container(run, "dashboards").env.GF_SERVER_ROOT_URL).toBe("https://dashboards.example.com");
    expect(container(run, "gateway").env.CONSOLE_PUBLIC_URL).toBe("https://console.example.com");
  });

  it("forces the configured platform on chat and console only (image pull and container)", () => {
    expect(container(run, "chat").platform).toBe("linux/amd64");
    expect(container(run, "console").platform).toBe("linux/amd64");
    expect(container(run, "gateway").platform).toBeUndefined();
    const chatPull = run.registered.find(
      (r) => r.type === "docker:index/remoteImage:RemoteImage" && r.name === "chat-image",
    );
    expect(chatPull?.inputs.platform).toBe("linux/amd64");
    const consoleBuild = run.registered.find(
      (r) => r.type === "docker:index/image:Image" && r.name === "console-build",
    );
    expect((consoleBuild?.inputs.build as { platform?: string } | undefined)?.platform).toBe("linux/amd64");
  });

  it("attaches exactly chat, console and gateway to SHARED_NETWORK", () => {
    const shared = [...run.containers.values()]
      .filter((c) => c.networksAdvanced.some((n) => n.name === "apps-net"))
      .map((c) => c.name)
      .sort();
    expect(shared).toEqual(["chat", "console", "gateway"]);
    expect(container(run, "gateway").networksAdvanced[1]).toEqual({ name: "apps-net", aliases: ["gateway"] });
  });

  it("uses a master key pinned in .env on both sides and generates none", () => {
    expect(container(run, "gateway").env.GATEWAY_MASTER_KEY).toBe("sk-pinned-master");
    expect(container(run, "console").env.GATEWAY_MASTER_KEY).toBe("sk-pinned-master");
    const names = run.registered.filter((r) => r.type.startsWith("random:")).map((r) => r.name);
    expect(names).not.toContain("gateway-master-key");
    expect(names).toContain("jwt-refresh-secret");
  });
});

describe("vm stack: Caddyfile", () => {
  it("passes the real `caddy validate`", () => {
    const caddyfile = container(run, "reverse-proxy").uploads.find(
      (u) => u.file === "/etc/caddy/Caddyfile",
    )?.content;
    const dir = mkdtempSync(path.join(tmpdir(), "caddy-validate-"));
    writeFileSync(path.join(dir, "Caddyfile"), caddyfile ?? "");
    const result = spawnSync(
      "caddy",
      ["validate", "--adapter", "caddyfile", "--config", path.join(dir, "Caddyfile")],
      {
        encoding: "utf8",
        env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
      },
    );
    expect(result.error).toBeUndefined();
    expect(`${result.stdout}${result.stderr}`).toContain("Valid configuration");
    expect(result.status).toBe(0);
  });
});
