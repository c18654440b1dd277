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

  it("would be refused by LibreChat with an unknown key (the schema check is real)", () => {
    expect(configSchema.strict().safeParse({ ...(raw as object), notAKey: 1 }).success).toBe(false);
  });
});
