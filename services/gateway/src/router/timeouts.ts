/**
 * How long the router (`router.ts`) waits on a deployment. `timeout` bounds a non-streamed call (headers, then
 * each wait for body data); `stream_timeout` bounds a stream's wait for its headers, its first chunk and each
 * next chunk (LiteLLM docs, proxy/timeout.md: "maximum time to wait for the first chunk"), 60 s when not
 * configured (or `timeout` if shorter), so a stream that never starts is retried on another deployment and one
 * that stalls is ended. A deployment's own setting wins over `router_settings`'.
 */
import type { Deployment, ModelConfig } from "../config/types.js";

/** A stream's idle timeout when no `stream_timeout` is configured, ms (between chunks, and for the first). */
export const DEFAULT_STREAM_TIMEOUT_MS = 60_000;

type RouterSettings = ModelConfig["router"];

/** A non-streamed call's timeout on `deployment`, ms: its `timeout`, else `router_settings`'. */
export function callTimeoutOf(settings: RouterSettings, deployment: Deployment): number {
  return deployment.timeoutMs ?? settings.timeoutMs;
}

/**
 * A stream's timeout on `deployment`, ms: the longest wait for its headers, its first chunk and each next chunk.
 * `stream_timeout` (the deployment's, else `router_settings`'), else {@link DEFAULT_STREAM_TIMEOUT_MS} or the
 * `timeout` that applies when that is shorter.
 */
export function streamTimeoutOf(settings: RouterSettings, deployment: Deployment): number {
  return (
    deployment.streamTimeoutMs ??
    settings.streamTimeoutMs ??
    Math.min(DEFAULT_STREAM_TIMEOUT_MS, callTimeoutOf(settings, deployment))
  );
}
