/**
 * chat-app.yaml against LibreChat's own config schema (librechat-data-provider, the version the pinned image
 * was built with), and the values the platform relies on.
 */
import { readFileSync } from "node:fs";
import { Constants, configSchema } from "librechat-data-provider";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../../infra/files.js";
import { IMAGES } from "../../infra/images.js";

const raw = parse(readFileSync(`${REPO_ROOT}chat-app.yaml`, "utf8")) as unknown;

describe("chat-app.yaml", () => {
  it("passes LibreChat's strict config schema", () => {
    const result = configSchema.strict().safeParse(raw);
    expect(result.error?.issues ?? []).toEqual([]);
  });

  it("declares the config version of the pinned LibreChat image", () => {
    expect((raw as { version: string }).version).toBe(Constants.CONFIG_VERSION);
    expect(IMAGES.librechat.ref.split(":").pop()).toBe(Constants.VERSION);
  });

  it("has one custom endpoint on the gateway inside the network, listing its models", () => {
    const config = configSchema.parse(raw);
    const custom = config.endpoints?.custom ?? [];
    expect(custom).toHaveLength(1);
    const endpoint = custom[0];
    expect(endpoint?.name).toBe("Platform");
    expect(endpoint?.baseURL).toBe("http://gateway:4000/v1");
    // LibreChat substitutes ${VAR} from its environment; the stack sets GATEWAY_API_KEY.
    expect(endpoint?.apiKey).toMatch(/^\$\{GATEWAY_API_KEY\}$/);
    expect(endpoint?.models).toEqual({ default: ["_no-model-registered"], fetch: true });
  });

  it("names the signed-in chat user in headers (LibreChat's placeholders) and keeps the session header", () => {
    const endpoint = configSchema.parse(raw).endpoints?.custom?.[0];
    expect(endpoint?.headers).toEqual({
      "x-session-id": "{{LIBRECHAT_BODY_CONVERSATIONID}}",
      "x-librechat-user-id": "{{LIBRECHAT_USER_ID}}",
      "x-librechat-user-email": "{{LIBRECHAT_USER_EMAIL}}",
    });
  });

  it("registers the gateway's /mcp as a Streamable HTTP MCP server, authenticated by each user's own key", () => {
    const servers = configSchema.parse(raw).mcpServers ?? {};
    expect(Object.keys(servers)).toEqual(["platform"]);
    const platform = servers.platform as Record<string, unknown>;
    expect(platform.type).toBe("streamable-http");
    expect(platform.url).toBe("http://gateway:4000/mcp");
    // LibreChat fills {{VAR}} from the user's customUserVars: the gateway sees the user's virtual key.
    expect(platform.headers).toEqual({ Authorization: "Bearer {{GATEWAY_KEY}}" });
    expect(Object.keys(platform.customUserVars as object)).toEqual(["GATEWAY_KEY"]);
    // Never the chat's service key: it may name users on model calls, and /mcp has no user attribution.
    expect(JSON.stringify(platform)).not.toContain("GATEWAY_API_KEY");
    expect(platform.startup).toBe(false);
    // The gateway is a private address inside the stack: exempted from LibreChat's SSRF block, alone.
    expect(configSchema.parse(raw).mcpSettings?.allowedAddresses).toEqual(["gateway:4000"]);
  });

  it("refuses an MCP server entry LibreChat would not accept (the schema reads mcpServers)", () => {
    const broken = { ...(raw as object), mcpServers: { platform: { type: "streamable-http" } } };
    expect(configSchema.strict().safeParse(broken).success).toBe(false);
  });

  it("would be refused by LibreChat with an unknown key (the schema check is real)", () => {
    expect(configSchema.strict().safeParse({ ...(raw as object), notAKey: 1 }).success).toBe(false);
  });
});
