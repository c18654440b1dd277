/**
 * Anthropic's native Messages API (Anthropic API reference, "Messages"): `POST {api_base}/messages` with the
 * headers `x-api-key` and `anthropic-version: 2023-06-01` ("Versions"). The client's Messages body goes as it
 * is, `model` set to the deployment's.
 */
import type { Deployment } from "../../config/types.js";
import type { UpstreamRequest } from "../types.js";

/** The `anthropic-version` header the gateway sends (Anthropic's current API version). */
export const ANTHROPIC_VERSION = "2023-06-01";

interface Target {
  origin: string;
  path: string;
  headers: Record<string, string>;
}

/** Parsed api_base per deployment, so the hot path never parses a URL. */
const targets = new WeakMap<Deployment, Target>();

/** The upstream request for a Messages call on `deployment` (`json`: the Messages body). */
export function messagesRequest(deployment: Deployment, json: string): UpstreamRequest {
  let target = targets.get(deployment);
  if (target === undefined) {
    const base = new URL(deployment.apiBase);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "anthropic-version": ANTHROPIC_VERSION,
    };
    if (deployment.apiKey !== undefined) headers["x-api-key"] = deployment.apiKey;
    target = { origin: base.origin, path: `${base.pathname.replace(/\/$/, "")}/messages`, headers };
    targets.set(deployment, target);
  }
  return { origin: target.origin, path: target.path, headers: target.headers, body: json };
}
