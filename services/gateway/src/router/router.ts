/**
 * Picks a deployment for a model alias and calls it, as LiteLLM's router does (docs.litellm.ai/docs/routing):
 * - the candidates are the alias's deployments, narrowed by the request's tags when
 *   `router_settings.enable_tag_filtering` is on (tags.ts), then to those under their `rpm`/`tpm` for this
 *   minute (deployment-state.ts), preferring ones not cooling down and not tried yet for this request;
 * - one of them is chosen by `routing_strategy` (strategy.ts: simple-shuffle weighted by `weight`,
 *   least-busy, usage-based-routing);
 * - retries with exponential backoff and jitter on 408/409/429/5xx, timeouts and connection errors, then the
 *   alias's fallbacks (`litellm_settings.fallbacks`), and a cooldown for deployments that keep failing
 *   (`allowed_fails`, `cooldown_time`). Retry storms are bounded three ways: at most `1 + num_retries`
 *   attempts per alias, at most {@link MAX_ATTEMPTS} in all, and no waiting longer than `MAX_BACKOFF_MS`
 *   between attempts (retry-backoff.ts; an upstream asking for a longer `retry-after` moves us to the next
 *   fallback instead);
 * - each attempt (upstream-attempt.ts) waits as long as `timeout`, or a stream's `stream_timeout` (timeouts.ts),
 *   allows; a call no deployment took gets no-deployment.ts's errors, one every attempt failed the upstream's.
 */

import type { Dispatcher } from "undici";
import { Agent } from "undici";
import type { Deployment, ModelConfig } from "../config/types.js";
import type { GatewayMetrics } from "../metrics/metrics.js";
import type { UpstreamApi } from "../providers/index.js";
import type { ForwardableJson } from "../providers/openai-compatible/forward-json.js";
import type { Clock } from "../time/clock.js";
import { type AbortSource, abortSignalOf } from "./call-abort.js";
import { CapIgnorers, streamedBody } from "./cap-ignorers.js";
import { type DeploymentLoad, DeploymentStates } from "./deployment-state.js";
import { allAtLimit, noDeployment, noTaggedDeployment } from "./no-deployment.js";
import { type ResourceAnswer, type ResourceRequest, sendResource } from "./resource.js";
import { retryBackoffMs, sleep } from "./retry-backoff.js";
import { makeRoutePlan, type RoutePlan } from "./route-plan.js";
import { choose, shuffleWeights } from "./strategy.js";
import { deploymentsForTags, requestTags, withoutTags } from "./tags.js";
import { callTimeoutOf, streamTimeoutOf } from "./timeouts.js";
import { type Attempt, sendAttempt } from "./upstream-attempt.js";
import { type AttemptFailure, isRetriable, toClientError } from "./upstream-error.js";

/** Hard cap on upstream attempts for one client request, fallbacks included. */
export const MAX_ATTEMPTS = 8;

/** A successful (2xx) upstream response whose body has not been read yet. */
export interface UpstreamResponse {
  deployment: Deployment;
  statusCode: number;
  headers: Dispatcher.ResponseData["headers"];
  body: Dispatcher.ResponseData["body"];
  /** Attempts made, this one included. */
  attempts: number;
  /** `performance.now()` ms when the successful attempt was sent (upstream latency is measured from here). */
  sentAt: number;
  /** Time spent in failed attempts and backoff before it, ms (counted as upstream time, not overhead). */
  retryMs: number;
  /**
   * A JSON call sent as a stream because its deployment ignores output caps ({@link SendOptions.assemble}): the
   * body is chat completion (or legacy completion) chunks, for the answer step to cut and assemble.
   */
  assembled: boolean;
}

/** An entry of GET /v1/models. */
export interface ModelEntry {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
}

/** Per-call options of {@link Router.send}. */
export interface SendOptions {
  /** Routing tags; default: the body's `tags` or `metadata.tags` (tags.ts). Used with tag filtering on. */
  tags?: string[];
  /**
   * Tokens this call is expected to use, counted against deployments' `tpm` when it is sent (default: the
   * prompt estimated from the body, one token per four bytes, computed only for groups with a `tpm` and for
   * usage-based routing).
   */
  estimatedTokens?: number;
  /**
   * The client's JSON text for `body` (`providers/openai-compatible/forward-json.ts`): sent with each deployment's model name spliced
   * in, instead of serialising `body`. Ignored when `body` has `tags` (they are not sent upstream).
   */
  json?: ForwardableJson;
  /** The upstream API `body` is for (default `chat/completions`); every deployment tried must serve it. */
  api?: UpstreamApi;
  /**
   * The aliases to try, in order (default: {@link Router.plan}): the call's authorized route plan
   * ({@link RoutePlan.aliases}), so that a fallback the caller may not use is never tried.
   */
  aliases?: readonly string[];
  /** Only these deployments (ids) are tried ({@link RoutePlan.only}); default: every deployment of the aliases. */
  only?: ReadonlySet<string>;
  /**
   * The caller can assemble a JSON answer from a stream (`streaming/assemble-json.ts`): a non-streamed
   * `chat/completions` or `completions` call to a deployment that ignores output caps ({@link CapIgnorers}) is
   * then sent with `stream: true` and `stream_options.include_usage` ({@link UpstreamResponse.assembled}).
   */
  assemble?: boolean;
}

/** Options of the {@link Router} itself. */
export interface RouterOptions {
  /** Uniform random numbers in [0, 1) for the shuffle (default Math.random; tests seed it). */
  random?: () => number;
  /** The deployments that ignore output caps (default: the config's declared ones, marks kept in process). */
  capIgnorers?: CapIgnorers;
}

/** Where one attempt counted its tokens, so that actual usage can replace the estimate. */
interface Counted {
  deployment: Deployment;
  minute: number;
  tokens: number;
}

/** Routes chat completions to deployments; one per gateway. */
export class Router {
  private readonly groups = new Map<string, Deployment[]>();
  private readonly plans = new Map<string, RoutePlan>();
  private readonly states: DeploymentStates;
  private readonly weights = new Map<Deployment, number>();
  /** Groups where some deployment has a `tpm` (they, and usage-based routing, need a token estimate). */
  private readonly tokenLimited = new Set<string>();
  private readonly counted = new WeakMap<UpstreamResponse, Counted>();
  private readonly agent: Agent;
  private readonly modelList: ModelEntry[];
  private readonly random: () => number;
  /** Deployments whose JSON calls go upstream as streams ({@link SendOptions.assemble}). */
  readonly capIgnorers: CapIgnorers;

  constructor(
    private readonly config: ModelConfig,
    private readonly metrics: GatewayMetrics,
    private readonly clock: Clock,
    options: RouterOptions = {},
  ) {
    this.random = options.random ?? Math.random;
    this.capIgnorers = options.capIgnorers ?? new CapIgnorers({ clock, deployments: config.deployments });
    this.states = new DeploymentStates(config.deployments);
    for (const d of config.deployments) {
      const group = this.groups.get(d.modelName) ?? [];
      group.push(d);
      this.groups.set(d.modelName, group);
      if (d.tpm !== undefined) this.tokenLimited.add(d.modelName);
      this.setState(d, 0);
    }
    for (const group of this.groups.values()) {
      for (const [d, w] of shuffleWeights(group)) this.weights.set(d, w);
    }
    for (const alias of this.groups.keys())
      this.plans.set(alias, makeRoutePlan(this.plan(alias), this.groups));
    this.modelList = [...this.groups.entries()].map(([id, ds]) => ({
      id,
      object: "model",
      created: ds[0]?.created ?? 0,
      owned_by: ds[0]?.provider ?? "openai",
    }));
    // One kept-alive connection pool per upstream origin.
    this.agent = new Agent({ connections: 256, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 });
  }

  /** Registered aliases in the OpenAI /v1/models shape. */
  models(): ModelEntry[] {
    return this.modelList;
  }

  /** The deployments behind an alias, or undefined for an unknown alias. */
  deployments(modelName: string): Deployment[] | undefined {
    return this.groups.get(modelName);
  }

  /** Every configured deployment, in the config's order. */
  allDeployments(): readonly Deployment[] {
    return this.config.deployments;
  }

  /** Aliases tried for `modelName`, in order: itself, then its fallbacks. */
  plan(modelName: string): string[] {
    return [modelName, ...(this.config.router.fallbacks[modelName] ?? [])];
  }

  /**
   * The route plan of `modelName` ({@link RoutePlan}; made once per alias, the config being fixed), undefined for
   * an alias that is not registered. Shared: callers narrow it into a new plan, never change it.
   */
  routePlan(modelName: string): RoutePlan | undefined {
    return this.plans.get(modelName);
  }

  /** A deployment's current load in this process: in flight, and requests and tokens this minute. */
  load(deployment: Deployment): DeploymentLoad {
    return this.states.load(deployment, this.clock.now());
  }

  /**
   * Calls an upstream with a body for `options.api` (default: an OpenAI chat completion), with retries and
   * fallbacks. The body's
   * `tags` (LiteLLM's routing field, which OpenAI's API refuses) is not sent upstream.
   * @param body the client's body; `model` is replaced per deployment.
   * @param signal aborted when the client goes away (an AbortSignal, or a {@link CallAbort}, which is cheaper);
   *   the in-flight upstream request is aborted with it.
   * @param options upstream API, routing tags and token estimate ({@link SendOptions}).
   * @throws GatewayError 400 `invalid_request_error` for malformed `tags`, 400
   *   `no_deployments_with_tag_routing` when tag filtering leaves no deployment, 429 `rate_limit_error` with
   *   `retry-after` (seconds to the next minute) when every eligible deployment is at its rpm/tpm limit; the
   *   upstream's failure mapped by `toClientError` when every attempt failed; the signal's reason on abort.
   */
  async send(
    modelName: string,
    body: Record<string, unknown>,
    signal: AbortSource,
    options: SendOptions = {},
  ): Promise<UpstreamResponse> {
    const started = performance.now();
    const hasTags = "tags" in body;
    const upstreamBody = hasTags ? withoutTags(body) : body;
    const json = hasTags ? undefined : options.json;
    const tags = this.config.router.tagFiltering ? (options.tags ?? requestTags(body)) : [];
    const stream = body.stream === true;
    const api = options.api ?? "chat/completions";
    const assemble =
      options.assemble === true && !stream && (api === "chat/completions" || api === "completions");
    let attempts = 0;
    let last: AttemptFailure | undefined;
    let limitedMs: number | undefined;
    let tagMatched = false;
    for (const alias of options.aliases ?? this.plan(modelName)) {
      const listed = this.groups.get(alias);
      if (listed === undefined) continue;
      const only = options.only;
      const all = only === undefined ? listed : listed.filter((d) => only.has(d.id));
      const group = this.config.router.tagFiltering
        ? deploymentsForTags(all, tags, this.config.router.tagMatchAny)
        : all;
      if (group.length === 0) continue;
      tagMatched = true;
      const countsTokens =
        this.tokenLimited.has(alias) || this.config.router.routingStrategy === "usage-based-routing";
      const tokens =
        options.estimatedTokens ?? (countsTokens ? Math.ceil(JSON.stringify(upstreamBody).length / 4) : 0);
      const tried = new Set<Deployment>();
      for (let i = 0; i <= this.config.router.numRetries && attempts < MAX_ATTEMPTS; i++) {
        if (i > 0) {
          const backoffMs = retryBackoffMs(i, last?.retryAfterSeconds);
          if (backoffMs === undefined) break; // the upstream wants us gone for longer: try the fallback
          await sleep(backoffMs, abortSignalOf(signal));
        }
        if (signal.aborted) throw signal.reason;
        const now = this.clock.now();
        const deployment = this.pick(group, tried, tokens, now);
        if (deployment === undefined) {
          limitedMs = this.states.msUntilReset(now);
          break; // every deployment is at its limit this minute: try the fallback
        }
        tried.add(deployment);
        attempts++;
        const minute = this.states.start(deployment, tokens, now);
        const sentAt = performance.now();
        const assembled = assemble && this.capIgnorers.ignores(deployment);
        const sendsStream = stream || assembled;
        const attempt: Attempt = {
          deployment,
          body: assembled ? streamedBody(upstreamBody) : upstreamBody,
          json: assembled ? undefined : json,
          stream: sendsStream,
          api,
          timeoutMs: sendsStream
            ? this.streamTimeoutOf(deployment)
            : callTimeoutOf(this.config.router, deployment),
        };
        const outcome = await sendAttempt(this.agent, attempt, signal).catch((error: unknown) => {
          this.states.finish(deployment);
          throw error;
        });
        if ("statusCode" in outcome) {
          this.recordSuccess(deployment);
          // In flight until the body has been read to its end (or closed early); whichever comes first.
          let done = false;
          const finish = () => {
            if (done) return;
            done = true;
            this.states.finish(deployment);
          };
          outcome.body.once("end", finish).once("close", finish);
          // Field by field: `{ ...outcome, deployment, … }` costs ~4 µs per call on Node 20 (spread + added fields).
          const response: UpstreamResponse = {
            deployment,
            statusCode: outcome.statusCode,
            headers: outcome.headers,
            body: outcome.body,
            attempts,
            sentAt,
            retryMs: sentAt - started,
            assembled,
          };
          this.counted.set(response, { deployment, minute, tokens });
          return response;
        }
        this.states.finish(deployment);
        if (signal.aborted) throw signal.reason;
        last = outcome;
        this.recordFailure(deployment);
        if (!isRetriable(outcome)) throw toClientError(outcome, attempts);
      }
    }
    if (last !== undefined) throw toClientError(last, attempts);
    if (limitedMs !== undefined) throw allAtLimit(modelName, limitedMs);
    if (!tagMatched && this.groups.has(modelName)) throw noTaggedDeployment(modelName, tags);
    throw noDeployment(modelName);
  }

  /**
   * Replaces the token estimate counted for a call with its actual usage (`usage.total_tokens`), so that
   * `tpm` limits and usage-based routing see real figures. Call once, when the call's usage is known; a
   * call whose minute is over is not corrected.
   */
  recordUsage(response: UpstreamResponse, totalTokens: number): void {
    const counted = this.counted.get(response);
    if (counted === undefined || !Number.isFinite(totalTokens)) return;
    this.counted.delete(response);
    this.states.addTokens(counted.deployment, totalTokens - counted.tokens, counted.minute, this.clock.now());
  }

  /**
   * A stream's timeout on `deployment`, ms: the longest wait for its headers, its first chunk and each next
   * chunk (timeouts.ts: `stream_timeout`, else 60 s or the `timeout` that applies when that is shorter).
   */
  streamTimeoutOf(deployment: Deployment): number {
    return streamTimeoutOf(this.config.router, deployment);
  }

  /**
   * Sends a resource request (`resource.ts`) to the deployment whose `model_info.id` is `deploymentId`, bounded
   * by its `timeout`; undefined when no such deployment is configured (any more).
   * @throws GatewayError 502/504 when the upstream gave no answer; the signal's reason on abort.
   */
  async resource(
    deploymentId: string,
    request: ResourceRequest,
    signal: AbortSignal,
  ): Promise<ResourceAnswer | undefined> {
    const deployment = this.config.deployments.find((d) => d.id === deploymentId);
    if (deployment === undefined) return undefined;
    const timeoutMs = callTimeoutOf(this.config.router, deployment);
    return sendResource(this.agent, deployment, request, timeoutMs, signal);
  }

  /** Closes the upstream connection pools. */
  close(): Promise<void> {
    this.capIgnorers.close();
    return this.agent.close();
  }

  /**
   * A deployment of `group` for the next attempt: among those under their rpm/tpm limits, preferring ones
   * not cooling down, then ones not tried yet, chosen by the routing strategy. Undefined when every
   * deployment is at its limit.
   */
  private pick(
    group: readonly Deployment[],
    tried: Set<Deployment>,
    tokens: number,
    now: number,
  ): Deployment | undefined {
    const open = group.filter((d) => this.states.hasRoom(d, tokens, now));
    if (open.length === 0) return undefined;
    const warm = open.filter((d) => !this.states.isCooling(d, now));
    const pool = warm.length > 0 ? warm : open;
    const fresh = pool.filter((d) => !tried.has(d));
    const choices = fresh.length > 0 ? fresh : pool;
    return choose(
      this.config.router.routingStrategy,
      choices,
      this.weights,
      (d) => this.states.load(d, now),
      this.random,
    );
  }

  private recordSuccess(deployment: Deployment): void {
    if (this.states.recordSuccess(deployment)) this.setState(deployment, 0);
  }

  private recordFailure(deployment: Deployment): void {
    const { allowedFails, cooldownMs } = this.config.router;
    const state = this.states.recordFailure(deployment, allowedFails, cooldownMs, this.clock.now());
    this.setState(deployment, state === "cooling" ? 2 : 1);
  }

  private setState(d: Deployment, state: number): void {
    this.metrics.deploymentState.set(
      { litellm_model_name: d.upstreamModel, model_id: d.id, api_provider: d.provider },
      state,
    );
  }
}
