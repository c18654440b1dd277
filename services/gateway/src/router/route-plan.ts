/**
 * A call's route plan (`router.ts`): every deployment the call may be sent to, alias by alias in the order the
 * router tries them. Made once per registered alias from the config; authorization narrows it.
 */
import type { Deployment } from "../config/types.js";

/**
 * Every deployment a call may be sent to, before it is sent: the requested alias, then its fallbacks, in the
 * order the router tries them (`litellm_settings.fallbacks`), unknown aliases left out. Authorization narrows it
 * to the aliases the caller may use; the budget reservation is the worst case over its deployments.
 */
export interface RoutePlan {
  /** Aliases in the order they are tried; the requested one first. */
  aliases: string[];
  /** The deployments of every alias in {@link aliases}, in that order. */
  deployments: Deployment[];
  /**
   * Only these deployments (ids) may be tried; absent: every deployment of {@link aliases}. Set when a call must
   * stay where its state is (a `previous_response_id` continues at the organisation that holds the response).
   */
  only?: ReadonlySet<string>;
}

/**
 * The route plan of `tried` (an alias, then its fallbacks): each alias `groups` has, once, with its deployments;
 * unknown and repeated aliases left out.
 */
export function makeRoutePlan(
  tried: readonly string[],
  groups: ReadonlyMap<string, readonly Deployment[]>,
): RoutePlan {
  const aliases: string[] = [];
  const deployments: Deployment[] = [];
  for (const alias of tried) {
    const group = groups.get(alias);
    if (group === undefined || aliases.includes(alias)) continue;
    aliases.push(alias);
    deployments.push(...group);
  }
  return { aliases, deployments };
}
