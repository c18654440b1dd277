/**
 * Guardrail services the gateway calls: pii-analyzer and pii-anonymizer (Presidio REST) and the scanner
 * (prompt-injection classifier, built from scanner/, model cached on a volume).
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { localImage } from "./build.js";
import type { PlatformConfig } from "./config.js";
import { httpCheck, type ImageSource, type ServiceSpec, serviceContainer } from "./container.js";
import type { ServiceComponentArgs } from "./datastores.js";
import { IMAGES } from "./images.js";

/** Port the scanner listens on inside the network (env PORT). */
export const SCANNER_PORT = 8000;
/** Where the scanner keeps its downloaded model (a named volume: about 700 MB, fetched once). */
export const SCANNER_MODEL_DIR = "/models";

/** A Presidio service (analyzer or anonymizer), both renderers. */
export function presidioSpec(
  config: PlatformConfig,
  service: "pii-analyzer" | "pii-anonymizer",
  key: "presidioAnalyzer" | "presidioAnonymizer",
): ServiceSpec {
  return {
    name: service,
    image: { pull: config.images[key], tools: IMAGES[key].tools },
    // The analyzer loads a large spaCy model before it answers.
    healthcheck: httpCheck("curl", "http://127.0.0.1:3000/health", { startPeriod: "120s" }),
  };
}

/** The prompt-injection scanner (built from scanner/), both renderers. */
export function scannerSpec(image: ImageSource): ServiceSpec {
  return {
    name: "scanner",
    image: image,
    env: { PORT: String(SCANNER_PORT), SCANNER_MODEL_DIR, HF_HOME: SCANNER_MODEL_DIR },
    volumes: { models: SCANNER_MODEL_DIR },
    // Unhealthy until the model is loaded; the first start downloads it (allow five minutes).
    healthcheck: httpCheck("node", `http://127.0.0.1:${SCANNER_PORT}/health`, { startPeriod: "300s" }),
  };
}

/** Component `platform:guardrails:Guardrails`. */
export class Guardrails extends pulumi.ComponentResource {
  /** Addresses for the gateway's GUARD_SCANNER_API_BASE, PII_ANALYZER_API_BASE, PII_ANONYMIZER_API_BASE. */
  readonly scannerUrl = `http://scanner:${SCANNER_PORT}`;
  readonly analyzerUrl = "http://pii-analyzer:3000";
  readonly anonymizerUrl = "http://pii-anonymizer:3000";
  readonly scannerImage: docker.Image;
  readonly containers: docker.Container[];

  constructor(name: string, args: ServiceComponentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:guardrails:Guardrails", name, {}, opts);
    const { ctx, config } = args;

    const presidio = (
      service: "pii-analyzer" | "pii-anonymizer",
      key: "presidioAnalyzer" | "presidioAnonymizer",
    ) => serviceContainer(this, ctx, presidioSpec(config, service, key));
    const analyzer = presidio("pii-analyzer", "presidioAnalyzer");
    const anonymizer = presidio("pii-anonymizer", "presidioAnonymizer");

    this.scannerImage = localImage(this, "scanner", "scanner/Dockerfile", ctx.platforms.scanner);
    const scanner = serviceContainer(this, ctx, {
      ...scannerSpec({ built: this.scannerImage }),
    });

    this.containers = [analyzer.container, anonymizer.container, scanner.container];
    this.registerOutputs({});
  }
}
