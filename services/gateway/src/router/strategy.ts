/**
 * Choosing one deployment among the eligible ones of a model group, by `router_settings.routing_strategy`
 * (LiteLLM's names and meanings, docs.litellm.ai/docs/routing and docs/proxy/load_balancing):
 * - `simple-shuffle`: a random pick, weighted by `litellm_params.weight` when any deployment of the group
 *   sets it (an absent weight counts 1), else by `rpm` when every deployment sets it, else by `tpm` when
 *   every deployment sets it, else uniform (LiteLLM's router_strategy/simple_shuffle.py order);
 * - `least-busy`: the fewest requests in flight; ties broken at random;
 * - `usage-based-routing`: the fewest tokens this minute, then the fewest requests; ties at random.
 */
import type { Deployment, RoutingStrategy } from "../config/types.js";
import type { DeploymentLoad } from "./deployment-state.js";

/** Pick weight of each deployment of each group for simple-shuffle (see the module comment). */
export function shuffleWeights(group: readonly Deployment[]): Map<Deployment, number> {
  const weights = new Map<Deployment, number>();
  const byWeight = group.some((d) => d.weight !== undefined);
  const byRpm = !byWeight && group.every((d) => d.rpm !== undefined && d.rpm > 0);
  const byTpm = !byWeight && !byRpm && group.every((d) => d.tpm !== undefined && d.tpm > 0);
  for (const d of group) {
    weights.set(d, byWeight ? (d.weight ?? 1) : byRpm ? d.rpm! : byTpm ? d.tpm! : 1);
  }
  return weights;
}

/**
 * One of `choices` (non-empty) by `strategy`.
 * @param weights simple-shuffle weights ({@link shuffleWeights}); a deployment missing from it weighs 1.
 * @param load the deployment's current load (least-busy, usage-based-routing).
 * @param random a uniform number in [0, 1) (Math.random in production).
 */
export function choose(
  strategy: RoutingStrategy,
  choices: readonly Deployment[],
  weights: ReadonlyMap<Deployment, number>,
  load: (d: Deployment) => DeploymentLoad,
  random: () => number,
): Deployment {
  if (choices.length === 1) return choices[0]!;
  if (strategy === "simple-shuffle") {
    let total = 0;
    for (const d of choices) total += weights.get(d) ?? 1;
    let point = random() * total;
    for (const d of choices) {
      point -= weights.get(d) ?? 1;
      if (point < 0) return d;
    }
    return choices[choices.length - 1]!;
  }
  const cost = (d: Deployment): [number, number] => {
    const l = load(d);
    return strategy === "least-busy" ? [l.inFlight, 0] : [l.tokens, l.requests];
  };
  let best: Deployment[] = [];
  let bestCost: [number, number] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (const d of choices) {
    const c = cost(d);
    const order = c[0] - bestCost[0] || c[1] - bestCost[1];
    if (order < 0) {
      best = [d];
      bestCost = c;
    } else if (order === 0) {
      best.push(d);
    }
  }
  return best[Math.floor(random() * best.length)] ?? choices[0]!;
}
