/**
 * The gateway's admin API: zod schemas of its requests and responses (LiteLLM's shapes) and a typed client.
 * The gateway validates with the request schemas; the console calls it through {@link AdminApiClient}.
 */
export * from "./audit.js";
export * from "./client.js";
export * from "./fields.js";
export * from "./known-fields.js";
export * from "./limit-input.js";
export * from "./mcp.js";
export * from "./requests.js";
export * from "./responses.js";
export * from "./team-input.js";
export * from "./teams.js";
export * from "./validate.js";
