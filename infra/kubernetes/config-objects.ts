/**
 * A service's Secret (its secret env, from the same generated or pinned values the Docker targets use) and
 * ConfigMap (its config files), with the guard that no secret value ever lands in a ConfigMap or an env
 * literal. Sources: Kubernetes API reference (core/v1 Secret `stringData`, ConfigMap `data`).
 */
import type { KubeObject } from "./workload.js";

/** Seconds above the gateway's own drain (GATEWAY_SHUTDOWN_TIMEOUT_MS) for the spend flush and exit. */
export const SHUTDOWN_MARGIN_SECONDS = 10;

/** terminationGracePeriodSeconds for a process that drains within `shutdownTimeoutMs` (ms) after SIGTERM. */
export function terminationGraceSeconds(shutdownTimeoutMs: number): number {
  return Math.ceil(shutdownTimeoutMs / 1000) + SHUTDOWN_MARGIN_SECONDS;
}

/** The Secret `<service>-env` holding `values` (env name → value). */
export function envSecret(service: string, namespace: string, values: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `${service}-env`, namespace, labels: { "app.kubernetes.io/name": service } },
    type: "Opaque",
    stringData: values,
  };
}

/** The ConfigMap `<service>-files` of `files` (file name → content), mounted read-only by the workload. */
export function filesConfigMap(
  service: string,
  namespace: string,
  files: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `${service}-files`, namespace, labels: { "app.kubernetes.io/name": service } },
    data: files,
  };
}

/**
 * Refuses a set of objects where a secret value shows in clear: in a ConfigMap's data or as a container's env
 * `value`. Values shorter than 8 characters are not compared (too likely to match by chance).
 * @throws Error naming the object and key (never the value).
 */
export function assertNoSecretLeak(objects: readonly KubeObject[], secretValues: readonly string[]): void {
  const secrets = secretValues.filter((v) => v.length >= 8);
  const leaks = (text: string) => secrets.some((s) => text.includes(s));
  for (const obj of objects) {
    const name = `${obj.kind}/${String(obj.metadata.name)}`;
    if (obj.kind === "ConfigMap")
      for (const [key, text] of Object.entries((obj.data as Record<string, string>) ?? {}))
        if (leaks(text)) throw new Error(`${name}: key ${key} holds a secret value; move it to a Secret`);
    const template = (obj.spec as { template?: { spec?: { containers?: unknown[] } } } | undefined)?.template;
    for (const c of (template?.spec?.containers ?? []) as {
      name: string;
      env?: { name: string; value?: string }[];
    }[])
      for (const e of c.env ?? [])
        if (e.value !== undefined && leaks(e.value))
          throw new Error(
            `${name}: container ${c.name} env ${e.name} holds a secret value; use a secretKeyRef`,
          );
  }
}
