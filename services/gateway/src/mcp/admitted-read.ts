/**
 * One upstream read for a caller on `/mcp` (`resources/read`, `prompts/get`): like a tools/call it reaches the
 * upstream, so it is admitted first through the pipeline's own admit step (`admitAs`, `pipeline/steps/admit.ts`,
 * the code the model routes and tools/call run): it counts against the `rpm_limit` of the key and its user, or
 * of its team and its membership there, and is refused when a budget is spent; it reserves nothing (0 USD,
 * 0 tokens) and is not booked in the spend log. Listings (`tools/list`, `resources/list`, `prompts/list`) are not
 * admitted: they read the servers' cached lists.
 */
import type { AuthContext } from "../auth/types.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Admission, Admitter } from "../limits/types.js";
import { admitAs } from "../pipeline/steps/admit.js";
import { forCaller } from "./reachable.js";
import { refusalError } from "./refusal.js";
import type { McpUpstream } from "./upstream.js";

/** What a read is run with: the declared upstreams and the gateway's admitter (none without Redis limits). */
export interface ReadDeps {
  upstreams: readonly McpUpstream[];
  admitter: Admitter | undefined;
}

/**
 * Admits the read against `auth`'s limits (admission model `mcp/<server>`), then runs it on `upstream`.
 * @returns what `run` answered.
 * @throws McpError {@link refusalError} (-32003, `data.status` 429) when a rate limit or budget refuses it,
 *   before `run` is called; InternalError when the upstream is unreachable, slow or fails (`forCaller`).
 */
export async function admittedRead<T>(
  deps: ReadDeps,
  auth: AuthContext,
  upstream: McpUpstream,
  run: () => Promise<T>,
): Promise<T> {
  let admission: Admission | undefined;
  try {
    admission = await admitAs(auth, deps.admitter, {
      model: `mcp/${upstream.config.name}`,
      estimatedCost: 0,
      estimatedTokens: 0,
    });
  } catch (error) {
    throw error instanceof GatewayError ? refusalError(error) : error;
  }
  try {
    const answered = await forCaller(run);
    admission?.settle({ cost: 0, totalTokens: 0 });
    return answered;
  } catch (error) {
    admission?.release();
    throw error;
  }
}
