/**
 * Every route the app registers outside `endpoints/` that does not run the model pipeline, each with why that is
 * safe. Together with `offPipelineRoutes` (`endpoints/index.ts`) this is the whole list of routes beside the
 * pipeline: the layout test (`test/services/gateway/layout/side-doors.test.ts`) builds the app and fails on any
 * route that neither runs the pipeline (route config `pipeline: true`) nor is listed.
 */
import type { OffPipelineRoute } from "../endpoints/index.js";
import { ADMIN_ROUTES } from "./admin/index.js";

const PROBE_WHY =
  "No key and no model call: answers the process's liveness or its dependencies' readiness (routes/health.ts), never a secret or a caller's data.";
const ADMIN_WHY =
  "Admin API: the master key only (a virtual key gets 403, routes/admin/context.ts); manages keys, users, teams and reads spend; calls no model.";
const MCP_WHY =
  "MCP tool calls, not model calls: every tools/call runs the pipeline's own admit step (admitAs: the key's, user's and team's rpm and budgets) and guard-input step, the output guard, a spend row, metrics and a trace (mcp/tool-call.ts); a virtual key is required, and lists and calls only the servers and tools its object_permission (or its team's) grants.";
const MCP_STATELESS_WHY =
  "Answers 405 only: the stateless MCP endpoint has no event stream (GET) and no session to end (DELETE); no upstream is reached.";

/** The app's routes beside the pipeline (besides `endpoints/`' own), with why. */
export const appRoutesBesidePipeline: readonly OffPipelineRoute[] = [
  { method: "GET", url: "/health/liveliness", why: PROBE_WHY },
  { method: "GET", url: "/health/liveness", why: PROBE_WHY },
  { method: "GET", url: "/health/readiness", why: PROBE_WHY },
  {
    method: "GET",
    url: "/metrics",
    why: "Prometheus scrape: counters with bounded labels (hashed keys, aliases), never a secret; METRICS_TOKEN when set (routes/metrics.ts).",
  },
  ...["/v1/models", "/models"].map((url) => ({
    method: "GET" as const,
    url,
    why: "Lists the registered model aliases (narrowed to a key's own models); no upstream call, nothing to count or guard (routes/models.ts).",
  })),
  ...["/model/info", "/v1/model/info"].map((url) => ({
    method: "GET" as const,
    url,
    why: "The master key only (requireMaster): each deployment's alias, provider/model and prices; never its API key or base URL; no upstream call (routes/model-info.ts).",
  })),
  ...["/ui", "/ui/"].map((url) => ({
    method: "GET" as const,
    url,
    why: "A redirect to the key console's sign-in (CONSOLE_PUBLIC_URL), or 404 when none is configured; no data.",
  })),
  { method: "POST", url: "/mcp", why: MCP_WHY },
  { method: "GET", url: "/mcp", why: MCP_STATELESS_WHY },
  { method: "DELETE", url: "/mcp", why: MCP_STATELESS_WHY },
  {
    method: "GET",
    url: "/v1/mcp/server",
    why: "The master key only (requireMaster): the declared MCP servers and their tools' names for operators; never a credential, header, env value, stdio args or URL query (mcp/server-list.ts); lists tools upstream (cached), calls none.",
  },
  ...ADMIN_ROUTES.map(([method, url]) => ({ method, url, why: ADMIN_WHY })),
];
