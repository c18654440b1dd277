/**
 * The vm stack's HTTPS reverse proxy (Caddy): public hosts of PUBLIC_HOSTS under the stack's domain, certificates
 * from ACME, and the shared-session cookie rewrite for chat and console.
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { renderCaddyfile } from "./caddyfile.js";
import { HOST_PORTS, PUBLIC_HOSTS } from "./config.js";
import { httpCheck, serviceContainer } from "./container.js";
import type { ServiceComponentArgs } from "./datastores.js";
import { IMAGES } from "./images.js";

/** Port of the proxy's internal health site. */
export const PROXY_HEALTH_PORT = 8081;

/** Container ports of the apps behind the proxy (dashboards and trace-web listen on 3000 inside). */
const UPSTREAM_PORTS: Record<keyof typeof PUBLIC_HOSTS, number> = {
  chat: HOST_PORTS.chat,
  console: HOST_PORTS.console,
  gateway: HOST_PORTS.gateway,
  "trace-web": 3000,
  dashboards: 3000,
};

/** Inputs of {@link ReverseProxy}. */
export interface ReverseProxyArgs extends ServiceComponentArgs {
  dependsOn: pulumi.Resource[];
}

/** Component `platform:proxy:ReverseProxy` (vm stack only). */
export class ReverseProxy extends pulumi.ComponentResource {
  /** The Caddyfile shipped into the container. */
  readonly caddyfile: string;
  readonly container: docker.Container;

  constructor(name: string, args: ReverseProxyArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:proxy:ReverseProxy", name, {}, opts);
    const { ctx, config } = args;
    const domain = config.stack.domain;
    if (!domain) throw new Error("the reverse proxy needs the stack's domain");

    this.caddyfile = renderCaddyfile({
      sites: (Object.keys(PUBLIC_HOSTS) as (keyof typeof PUBLIC_HOSTS)[]).map((service) => ({
        address: `${PUBLIC_HOSTS[service]}.${domain}`,
        upstream: `${service}:${UPSTREAM_PORTS[service]}`,
        sharedCookie: service === "chat" || service === "console",
        // Metrics are scraped inside the network; never published.
        ...(service === "gateway" || service === "console" ? { internalPaths: ["/metrics"] } : {}),
      })),
      cookieDomain: config.cookieDomain,
      ...(config.stack.acmeEmail ? { acmeEmail: config.stack.acmeEmail } : {}),
      healthPort: PROXY_HEALTH_PORT,
    });

    const { container } = serviceContainer(
      this,
      // Public: 80 (ACME challenges, redirect) and 443 on every interface, whatever bindAddress says.
      { ...ctx, bindAddress: "0.0.0.0" },
      {
        name: "reverse-proxy",
        image: { pull: config.images.caddy, tools: IMAGES.caddy.tools },
        publish: [
          { internal: 80, external: 80 },
          { internal: 443, external: 443 },
          { internal: 443, external: 443, protocol: "udp" },
        ],
        volumes: { data: "/data", config: "/config" },
        uploads: [{ file: "/etc/caddy/Caddyfile", content: this.caddyfile }],
        healthcheck: httpCheck("wget", `http://127.0.0.1:${PROXY_HEALTH_PORT}/healthz`),
        dependsOn: args.dependsOn,
      },
    );
    this.container = container;
    this.registerOutputs({});
  }
}
