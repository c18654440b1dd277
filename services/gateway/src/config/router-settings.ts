/**
 * Routing settings from `router_settings` and `litellm_settings` (LiteLLM docs, proxy/configs.md and
 * routing.md): `router_settings` wins over `litellm_settings` (LiteLLM's rule); timeouts are seconds in the
 * file and ms in the result. A `routing_strategy` the router does not implement is refused, never replaced
 * silently.
 */
import type { z } from "zod";
import { optional, type Path, toMs } from "./messages.js";
import type { Report } from "./report.js";
import type { litellmSettingsSchema, routerSettingsSchema } from "./schemas.js";
import type { Deployment, RouterSettings, RoutingStrategy } from "./types.js";

/** Defaults of the routing settings (config/types.ts). */
export const routerDefaults = {
  numRetries: 2,
  timeoutMs: 600_000,
  allowedFails: 3,
  cooldownMs: 5_000,
  routingStrategy: "simple-shuffle",
  tagFiltering: false,
  tagMatchAny: true,
} as const satisfies Omit<RouterSettings, "fallbacks">;

/** Strategies the router implements, under LiteLLM's names (`usage-based-routing-v2` is the same). */
const strategies: Record<string, RoutingStrategy> = {
  "simple-shuffle": "simple-shuffle",
  "least-busy": "least-busy",
  "usage-based-routing": "usage-based-routing",
  "usage-based-routing-v2": "usage-based-routing",
};

/** LiteLLM strategies this gateway refuses, with why. */
const refused: Record<string, string> = {
  "latency-based-routing": "the gateway keeps no per-deployment latency history to rank deployments by",
  "cost-based-routing":
    "deployments of one model group are priced alike here; use simple-shuffle with weight",
};

/**
 * Reads the routing settings.
 * @param groups the `model_name`s of the file, for checking fallbacks.
 * @param deployments the loaded deployments, to warn about tags that would not route.
 */
export function readRouterSettings(
  report: Report,
  litellm: z.output<typeof litellmSettingsSchema>,
  router: z.output<typeof routerSettingsSchema>,
  groups: Set<string>,
  deployments: readonly Deployment[],
): RouterSettings {
  const fallbacksAt: Path =
    router.fallbacks !== undefined ? ["router_settings", "fallbacks"] : ["litellm_settings", "fallbacks"];
  const fallbacks = readFallbacks(report, router.fallbacks ?? litellm.fallbacks ?? [], fallbacksAt, groups);
  const timeout = router.timeout ?? litellm.request_timeout;
  const tagFiltering = router.enable_tag_filtering ?? routerDefaults.tagFiltering;
  const tagged = deployments.filter((d) => d.tags.length > 0).map((d) => d.id);
  if (!tagFiltering && tagged.length > 0) {
    report.warn(
      ["router_settings"],
      `deployment(s) ${tagged.join(", ")} carry tags, but router_settings.enable_tag_filtering is not true, so a request's tags do not choose among deployments (set enable_tag_filtering: true for LiteLLM's tag-based routing)`,
    );
  }
  return {
    numRetries: router.num_retries ?? litellm.num_retries ?? routerDefaults.numRetries,
    timeoutMs: toMs(timeout) ?? routerDefaults.timeoutMs,
    ...optional("streamTimeoutMs", toMs(router.stream_timeout)),
    fallbacks,
    allowedFails: router.allowed_fails ?? litellm.allowed_fails ?? routerDefaults.allowedFails,
    cooldownMs: toMs(router.cooldown_time) ?? routerDefaults.cooldownMs,
    routingStrategy: readStrategy(report, router.routing_strategy),
    tagFiltering,
    tagMatchAny: router.tag_filtering_match_any ?? routerDefaults.tagMatchAny,
  };
}

function readStrategy(report: Report, name: string | undefined): RoutingStrategy {
  if (name === undefined) return routerDefaults.routingStrategy;
  const strategy = strategies[name];
  if (strategy !== undefined) return strategy;
  const supported = Object.keys(strategies).join(", ");
  const why = refused[name];
  report.problem(
    ["router_settings", "routing_strategy"],
    why === undefined
      ? `routing_strategy "${name}" is not a routing strategy this gateway knows; use one of ${supported}`
      : `routing_strategy "${name}" is not implemented by this gateway (${why}); use one of ${supported}`,
  );
  return routerDefaults.routingStrategy;
}

/** LiteLLM's `[{group: [backup, …]}, …]` → `{group: [backup, …]}`; every name must be a registered group. */
function readFallbacks(
  report: Report,
  list: Array<Record<string, string[]>>,
  at: Path,
  groups: Set<string>,
): Record<string, string[]> {
  const fallbacks: Record<string, string[]> = {};
  const known = groups.size === 0 ? "none are registered" : `registered: ${[...groups].join(", ")}`;
  list.forEach((item, index) => {
    for (const [group, backups] of Object.entries(item)) {
      const here: Path = [...at, index, group];
      if (!groups.has(group)) {
        report.problem(
          here,
          `fallbacks name model "${group}", which is not a model_name in model_list (${known})`,
        );
      }
      if (fallbacks[group] !== undefined) report.problem(here, `fallbacks for "${group}" are given twice`);
      backups.forEach((backup, i) => {
        if (!groups.has(backup)) {
          report.problem(
            [...here, i],
            `fallback model "${backup}" is not a model_name in model_list (${known})`,
          );
        } else if (backup === group) {
          report.problem([...here, i], `model "${group}" cannot be its own fallback`);
        }
      });
      fallbacks[group] = backups;
    }
  });
  return fallbacks;
}
