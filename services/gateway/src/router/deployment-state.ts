/**
 * What the router knows about each deployment right now, in this process: its health (consecutive failures,
 * cooldown: `allowed_fails`, `cooldown_time`), the requests it has in flight (for `least-busy`), and its
 * usage in the current clock minute (requests and tokens, for `litellm_params.rpm`/`tpm` and
 * `usage-based-routing`). LiteLLM keeps the same counters per deployment id and minute
 * (docs.litellm.ai/docs/routing, "usage-based-routing"; its router_strategy/lowest_tpm_rpm_v2.py keys them
 * `{id}:rpm:{HH-MM}`). Counters are per instance: with N gateway instances, a deployment can see up to N×rpm.
 */
import type { Deployment } from "../config/types.js";

const MINUTE_MS = 60_000;

/** One deployment's counters. */
export interface DeploymentLoad {
  /** Requests sent and not yet finished (a stream counts until its body is closed). */
  inFlight: number;
  /** Attempts sent in the current clock minute. */
  requests: number;
  /** Tokens counted in the current clock minute: prompt estimates at send, corrected by actual usage. */
  tokens: number;
}

interface State extends DeploymentLoad {
  /** Clock minute (epoch ms / 60 000, floored) the `requests`/`tokens` belong to. */
  minute: number;
  consecutiveFails: number;
  /** Epoch ms until which the deployment is skipped. */
  cooledUntil: number;
}

/** Counters of every deployment, keyed by the Deployment object. */
export class DeploymentStates {
  private readonly states = new Map<Deployment, State>();

  constructor(deployments: readonly Deployment[]) {
    for (const d of deployments) {
      this.states.set(d, {
        inFlight: 0,
        requests: 0,
        tokens: 0,
        minute: 0,
        consecutiveFails: 0,
        cooledUntil: 0,
      });
    }
  }

  /** The deployment's load now (epoch ms), with the minute counters reset when the minute has turned. */
  load(d: Deployment, now: number): DeploymentLoad {
    const s = this.state(d, now);
    return { inFlight: s.inFlight, requests: s.requests, tokens: s.tokens };
  }

  /**
   * Whether one more request of `tokens` (estimated) fits the deployment's `rpm` and `tpm` this minute.
   * A deployment without limits always has room.
   */
  hasRoom(d: Deployment, tokens: number, now: number): boolean {
    if (d.rpm === undefined && d.tpm === undefined) return true;
    const s = this.state(d, now);
    if (d.rpm !== undefined && s.requests + 1 > d.rpm) return false;
    if (d.tpm !== undefined && s.tokens + tokens > d.tpm) return false;
    return true;
  }

  /** Ms from `now` until the minute turns and the counters reset (for `retry-after`). */
  msUntilReset(now: number): number {
    return (Math.floor(now / MINUTE_MS) + 1) * MINUTE_MS - now;
  }

  /** Counts an attempt: one request, `tokens` estimated tokens, one more in flight. Returns its minute. */
  start(d: Deployment, tokens: number, now: number): number {
    const s = this.state(d, now);
    s.requests++;
    s.tokens += tokens;
    s.inFlight++;
    return s.minute;
  }

  /** The attempt is over (failed, or its response body closed). */
  finish(d: Deployment): void {
    const s = this.states.get(d);
    if (s !== undefined && s.inFlight > 0) s.inFlight--;
  }

  /** Adds `delta` tokens to the minute `minute` (ignored once that minute is over). */
  addTokens(d: Deployment, delta: number, minute: number, now: number): void {
    const s = this.state(d, now);
    if (s.minute === minute) s.tokens = Math.max(0, s.tokens + delta);
  }

  /** Whether the deployment is cooling down at `now`. */
  isCooling(d: Deployment, now: number): boolean {
    return (this.states.get(d)?.cooledUntil ?? 0) > now;
  }

  /** A success clears the failure count; returns true when the deployment was unhealthy before. */
  recordSuccess(d: Deployment): boolean {
    const s = this.states.get(d);
    if (s === undefined || s.consecutiveFails === 0) return false;
    s.consecutiveFails = 0;
    s.cooledUntil = 0;
    return true;
  }

  /**
   * Counts a failure; after `allowedFails` in a row the deployment cools down for `cooldownMs`.
   * @returns "cooling" when it now cools down, "failing" otherwise.
   */
  recordFailure(d: Deployment, allowedFails: number, cooldownMs: number, now: number): "cooling" | "failing" {
    const s = this.states.get(d);
    if (s === undefined) return "failing";
    s.consecutiveFails++;
    if (s.consecutiveFails >= allowedFails) {
      s.cooledUntil = now + cooldownMs;
      return "cooling";
    }
    return "failing";
  }

  private state(d: Deployment, now: number): State {
    let s = this.states.get(d);
    if (s === undefined) {
      s = { inFlight: 0, requests: 0, tokens: 0, minute: 0, consecutiveFails: 0, cooledUntil: 0 };
      this.states.set(d, s);
    }
    const minute = Math.floor(now / MINUTE_MS);
    if (s.minute !== minute) {
      s.minute = minute;
      s.requests = 0;
      s.tokens = 0;
    }
    return s;
  }
}
