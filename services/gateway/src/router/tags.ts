/**
 * Tag-based routing, as LiteLLM does it when `router_settings.enable_tag_filtering` is true
 * (docs.litellm.ai/docs/proxy/tag_routing; its router_strategy/tag_based_routing.py):
 * - a request's tags come from its `tags` field (a list, or one string) or `metadata.tags`;
 * - with tags, a deployment is eligible when it carries any of them (`tag_filtering_match_any`, the
 *   default) or all of them (`tag_filtering_match_any: false`);
 * - without tags, the deployments tagged `default` are eligible, or every deployment when none is.
 * A deployment's tags are `litellm_params.tags` and `model_info.tags` (config/model-list.ts).
 */
import type { Deployment } from "../config/types.js";
import { invalidRequest } from "../errors/gateway-error.js";

/**
 * The routing tags of a chat completion body: `tags`, else `metadata.tags`; [] when neither is set.
 * @throws GatewayError 400 naming the field when it is neither a string nor a list of strings.
 */
export function requestTags(body: Record<string, unknown>): string[] {
  if (body.tags !== undefined && body.tags !== null) return tagList(body.tags, "tags");
  const metadata = body.metadata;
  if (typeof metadata === "object" && metadata !== null && !Array.isArray(metadata)) {
    const tags = (metadata as Record<string, unknown>).tags;
    if (tags !== undefined && tags !== null) return tagList(tags, "metadata.tags");
  }
  return [];
}

function tagList(value: unknown, param: string): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((t) => typeof t === "string")) return value;
  throw invalidRequest(`Invalid request: ${param} must be a string or an array of strings.`, param);
}

/** The deployments of a group a request with `tags` may use (see the module comment). */
export function deploymentsForTags(
  group: readonly Deployment[],
  tags: readonly string[],
  matchAny: boolean,
): Deployment[] {
  if (tags.length === 0) {
    const defaults = group.filter((d) => d.tags.includes("default"));
    return defaults.length > 0 ? defaults : [...group];
  }
  return group.filter((d) =>
    matchAny ? tags.some((t) => d.tags.includes(t)) : tags.every((t) => d.tags.includes(t)),
  );
}

/** `body` without LiteLLM's `tags` routing field (OpenAI's API refuses it): a copy. */
export function withoutTags(body: Record<string, unknown>): Record<string, unknown> {
  const { tags: _routing, ...rest } = body;
  return rest;
}
