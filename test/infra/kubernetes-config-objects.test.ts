/**
 * Secrets and ConfigMaps of the kubernetes renderer (infra/kubernetes/config-objects.ts): valid against the
 * Kubernetes schemas, the no-secret-in-clear guard, and the gateway's grace period above its drain timeout.
 */
import { ConfigMap, Secret } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { httpCheck } from "../../infra/container.js";
import {
  assertNoSecretLeak,
  envSecret,
  filesConfigMap,
  terminationGraceSeconds,
} from "../../infra/kubernetes/config-objects.js";
import { renderWorkload, type WorkloadSpec } from "../../infra/kubernetes/workload.js";

const MASTER = "sk-master-0123456789";
const spec = (env: Record<string, string>): WorkloadSpec => ({
  name: "gateway",
  image: "registry.example.com/gateway:1",
  port: 4000,
  env,
  secretEnv: ["GATEWAY_MASTER_KEY"],
  healthcheck: httpCheck("node", "http://127.0.0.1:4000/health/liveliness"),
  memoryMb: 512,
  cpuMillis: 250,
});

describe("Secret and ConfigMap", () => {
  it("validate against the schemas", () => {
    new Secret(envSecret("gateway", "platform", { GATEWAY_MASTER_KEY: MASTER }) as never).validate();
    new ConfigMap(
      filesConfigMap("gateway", "platform", { "policy.yaml": "rules: []\n" }) as never,
    ).validate();
  });

  it("accept secrets by reference and refuse them in clear", () => {
    const [ok] = renderWorkload(spec({ PORT: "4000" }), "platform");
    const files = filesConfigMap("gateway", "platform", { "config.yaml": "model_list: []\n" });
    expect(() => assertNoSecretLeak([ok, files], [MASTER])).not.toThrow();

    const [leaky] = renderWorkload(spec({ DATABASE_URL: `postgres://u:${MASTER}@db/x` }), "platform");
    expect(() => assertNoSecretLeak([leaky], [MASTER])).toThrow(/env DATABASE_URL holds a secret value/);
    const leakyFiles = filesConfigMap("gateway", "platform", { "config.yaml": `master_key: ${MASTER}\n` });
    expect(() => assertNoSecretLeak([leakyFiles], [MASTER])).toThrow(/key config.yaml holds a secret value/);
  });

  it("never print the leaked value", () => {
    const leakyFiles = filesConfigMap("gateway", "platform", { a: MASTER });
    let message = "";
    try {
      assertNoSecretLeak([leakyFiles], [MASTER]);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/ConfigMap\/gateway-files: key a/);
    expect(message).not.toContain(MASTER);
  });
});

describe("terminationGraceSeconds", () => {
  it("exceeds the gateway's default drain of 8000 ms", () => {
    expect(terminationGraceSeconds(8000)).toBeGreaterThan(8);
    expect(terminationGraceSeconds(8500)).toBe(19);
  });
});
