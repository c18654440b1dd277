/**
 * The key console (services/console): built locally, or pulled as `<consoleImage>:<CONSOLE_TAG>` when the
 * stack names a prebuilt image. Shares the chat's session (same JWT_REFRESH_SECRET, same cookie domain) and
 * provisions users through the gateway with the same master key.
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { localImage } from "./build.js";
import { HOST_PORTS } from "./config.js";
import { httpCheck, type ImageSource, type ServiceSpec, serviceContainer } from "./container.js";
import type { ServiceComponentArgs, ServiceFacts } from "./datastores.js";
import { LOCAL_IMAGE_TOOLS } from "./images.js";

/** Inputs of {@link Console}. */
export interface ConsoleArgs extends ServiceComponentArgs, ConsoleLinks {
  dependsOn: pulumi.Resource[];
}

/** Where the console reaches the services it calls. */
export interface ConsoleLinks {
  mongoUri: pulumi.Input<string>;
  /** The stack's Redis: console sessions live there (kept across restarts, shared by replicas). */
  redisUrl: pulumi.Input<string>;
  gatewayUrl: string;
}

/** The console's service description (both renderers). */
export function consoleSpec(base: ServiceFacts, links: ConsoleLinks, image: ImageSource): ServiceSpec {
  const { config, secrets } = base;
  const env = config.env;
  return {
    name: "console",
    image,
    env: {
      PORT: String(HOST_PORTS.console),
      PUBLIC_URL: config.urls.console,
      CHAT_URL: config.urls.chat,
      GATEWAY_URL: links.gatewayUrl,
      // What key holders call (filled into the console's curl/Python/JavaScript snippets).
      GATEWAY_PUBLIC_URL: config.urls.gateway,
      GATEWAY_MASTER_KEY: secrets.gatewayMasterKey,
      JWT_REFRESH_SECRET: secrets.jwtRefreshSecret,
      MONGO_URI: links.mongoUri,
      REDIS_URL: links.redisUrl,
      COOKIE_DOMAIN: config.cookieDomain,
      COOKIE_SAMESITE: "lax",
      ADMIN_SESSION_IDLE_TIMEOUT_MS: String(env.ADMIN_SESSION_IDLE_TIMEOUT_MS),
      DEFAULT_USER_BUDGET: String(env.DEFAULT_USER_BUDGET),
      DEFAULT_BUDGET_DURATION: env.DEFAULT_BUDGET_DURATION,
      DEFAULT_TPM_LIMIT: String(env.DEFAULT_TPM_LIMIT),
      DEFAULT_RPM_LIMIT: String(env.DEFAULT_RPM_LIMIT),
      ...(env.DEFAULT_TEAM_ID === undefined ? {} : { DEFAULT_TEAM_ID: env.DEFAULT_TEAM_ID }),
    },
    publish: [{ internal: HOST_PORTS.console, external: HOST_PORTS.console }],
    healthcheck: httpCheck("node", `http://127.0.0.1:${HOST_PORTS.console}/_health`),
    shared: true,
  };
}

/** Component `platform:console:Console`. */
export class Console extends pulumi.ComponentResource {
  /** The local build, unless a prebuilt image is configured. */
  readonly image?: docker.Image;
  readonly container: docker.Container;

  constructor(name: string, args: ConsoleArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:console:Console", name, {}, opts);
    const { ctx, config } = args;
    const env = config.env;

    let source: ImageSource;
    if (config.stack.consoleImage) {
      source = { pull: `${config.stack.consoleImage}:${env.CONSOLE_TAG}`, tools: LOCAL_IMAGE_TOOLS };
    } else {
      this.image = localImage(this, "console", "services/console/Dockerfile", ctx.platforms.console);
      source = { built: this.image };
    }

    const { container } = serviceContainer(this, ctx, {
      ...consoleSpec(args, args, source),
      dependsOn: args.dependsOn,
    });
    this.container = container;
    this.registerOutputs({});
  }
}
