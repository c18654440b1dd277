/**
 * Kubernetes probes from the Docker health checks the components already declare (infra/container.ts): one
 * health check, two renderers. An HTTP check made by {@link httpCheck} becomes an `httpGet` probe (no probe
 * program needed in the image); any other check runs as an `exec` probe with the same command.
 * Source of the probe fields: Kubernetes API reference, core/v1 Probe.
 */
import type { HealthCheck } from "../container.js";

/** A core/v1 Probe as plain JSON (the subset this program sets). */
export interface Probe {
  httpGet?: { path: string; port: number };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
}

/**
 * Seconds of a Docker duration such as "30s", "2m" or "1m30s".
 * @throws Error on any other form.
 */
export function durationSeconds(duration: string): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  if (!match || duration === "") throw new Error(`not a duration in s/m: ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

/** The loopback URL an HTTP check probes, or undefined when the check is not one of httpCheck's forms. */
export function probedUrl(check: HealthCheck): URL | undefined {
  const [form, program, ...args] = check.test;
  if (form !== "CMD") return undefined;
  let candidate: string | undefined;
  if (program === "wget" || program === "curl") candidate = args[args.length - 1];
  if (program === "node" && args[0] === "-e") candidate = /^fetch\(("[^"]*")\)/.exec(args[1] ?? "")?.[1];
  if (candidate === undefined) return undefined;
  const text = candidate.startsWith('"') ? (JSON.parse(candidate) as string) : candidate;
  try {
    const url = new URL(text);
    return url.hostname === "127.0.0.1" || url.hostname === "localhost" ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The probe for `check`. `path` replaces the probed path of an HTTP check (the gateway's readiness probe uses
 * its liveness check's port with `/health/readiness`).
 * @returns a liveness-style probe: Docker's interval, timeout and retries; the start period as initial delay.
 */
export function probeFor(check: HealthCheck, path?: string): Probe {
  const timing = {
    periodSeconds: durationSeconds(check.interval ?? "30s"),
    timeoutSeconds: durationSeconds(check.timeout ?? "10s"),
    failureThreshold: check.retries ?? 5,
  };
  const url = probedUrl(check);
  if (url) {
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    return { httpGet: { path: path ?? `${url.pathname}${url.search}`, port }, ...timing };
  }
  const [form, ...rest] = check.test;
  const command = form === "CMD-SHELL" ? ["sh", "-c", rest[0] ?? ""] : rest;
  return { exec: { command }, ...timing };
}

/**
 * A startup probe that gives the container Docker's start period before liveness counts (Kubernetes has no
 * start period on the liveness probe itself).
 */
export function startupProbeFor(check: HealthCheck, path?: string): Probe {
  const base = probeFor(check, path);
  const period = 5;
  const grace = durationSeconds(check.startPeriod ?? "30s");
  return { ...base, periodSeconds: period, failureThreshold: Math.max(1, Math.ceil(grace / period)) };
}
