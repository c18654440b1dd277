/**
 * The whole stack from a validated config: provider, secrets, network and one component per concern.
 * `infra/index.ts` calls it with the current stack's config; tests call it with their own.
 */
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { Chat } from "./chat.js";
import type { PlatformConfig, PlatformUrls } from "./config.js";
import { Console } from "./console.js";
import type { ContainerContext } from "./container.js";
import { Datastores } from "./datastores.js";
import { Gateway } from "./gateway.js";
import { Guardrails } from "./guardrails.js";
import { Monitoring } from "./monitoring.js";
import { Network } from "./network.js";
import { ReverseProxy } from "./proxy.js";
import { Secrets } from "./secrets.js";
import { Tracing } from "./tracing.js";

/** Name of the stack's network and prefix of its volumes. */
export const STACK_PREFIX = "platform";

/** The stack outputs (`pulumi stack output`). Logins and the master key are secrets. */
export interface PlatformOutputs {
  urls: PlatformUrls;
  traceLogin: pulumi.Output<{ email: string; password: string }>;
  dashboardsLogin: pulumi.Output<{ user: string; password: string }>;
  /** Bearer for /v1/models and the gateway admin UI (/ui). */
  gatewayMasterKey: pulumi.Output<string>;
  /** Names of every Docker volume the stack mounts, sorted (what `docker volume rm` takes). */
  dataVolumes: pulumi.Output<string[]>;
}

/** What {@link buildPlatform} declared, for the entry point's exports and for tests. */
export interface Platform {
  outputs: PlatformOutputs;
  provider: docker.Provider;
  /** Every container, in SERVICES order by component, plus the reverse proxy on the vm stack. */
  containers: docker.Container[];
  components: pulumi.ComponentResource[];
}

/**
 * Declares the stack described by `config`.
 * @throws Error when a component's declaration is inconsistent (see serviceContainer).
 */
export function buildPlatform(config: PlatformConfig): Platform {
  const { stack, env } = config;
  const registryAuth =
    stack.registryUsername && env.REGISTRY_TOKEN
      ? [
          {
            address: stack.registryAddress,
            username: stack.registryUsername,
            password: pulumi.secret(env.REGISTRY_TOKEN),
          },
        ]
      : undefined;
  const provider = new docker.Provider("docker", {
    ...(stack.dockerHost ? { host: stack.dockerHost } : {}),
    ...(stack.sshOpts.length > 0 ? { sshOpts: stack.sshOpts } : {}),
    ...(registryAuth ? { registryAuth } : {}),
  });
  const opts: pulumi.ComponentResourceOptions = { providers: [provider] };

  const secrets = new Secrets("secrets", { env }, opts);
  const network = new Network(STACK_PREFIX, { name: STACK_PREFIX }, opts);
  const ctx: ContainerContext = {
    network: network.network,
    ...(env.SHARED_NETWORK ? { sharedNetwork: env.SHARED_NETWORK } : {}),
    bindAddress: stack.bindAddress,
    platforms: stack.platforms,
    volumePrefix: STACK_PREFIX,
    retainVolumes: !stack.dropVolumesOnDestroy,
  };
  const base = { ctx, config, secrets: secrets.values };

  const datastores = new Datastores("datastores", base, opts);
  const [relationalDb, documentDb, cache] = datastores.containers as [
    docker.Container,
    docker.Container,
    docker.Container,
  ];
  const tracing = new Tracing(
    "tracing",
    {
      ...base,
      traceDatabaseUrl: datastores.traceDatabaseUrl,
      redisUrl: datastores.redisUrl,
      dependsOn: [relationalDb, cache],
    },
    opts,
  );
  const guardrails = new Guardrails("guardrails", base, opts);
  const gateway = new Gateway(
    "gateway",
    {
      ...base,
      databaseUrl: datastores.gatewayDatabaseUrl,
      redisUrl: datastores.redisUrl,
      scannerUrl: guardrails.scannerUrl,
      analyzerUrl: guardrails.analyzerUrl,
      anonymizerUrl: guardrails.anonymizerUrl,
      traceUrl: tracing.internalUrl,
      dependsOn: [relationalDb, cache],
    },
    opts,
  );
  const chat = new Chat("chat", { ...base, mongoUri: datastores.mongoUri, dependsOn: [documentDb] }, opts);
  const consoleApp = new Console(
    "console",
    {
      ...base,
      mongoUri: datastores.mongoUri,
      redisUrl: datastores.redisUrl,
      gatewayUrl: gateway.internalUrl,
      dependsOn: [documentDb, cache],
    },
    opts,
  );
  const monitoring = new Monitoring("monitoring", { ...base, dependsOn: [relationalDb, cache] }, opts);

  const containers = [
    ...datastores.containers,
    ...tracing.containers,
    ...guardrails.containers,
    gateway.container,
    chat.container,
    consoleApp.container,
    ...monitoring.containers,
  ];
  const components: pulumi.ComponentResource[] = [
    secrets,
    network,
    datastores,
    tracing,
    guardrails,
    gateway,
    chat,
    consoleApp,
    monitoring,
  ];
  if (stack.target === "vm") {
    const proxy = new ReverseProxy(
      "reverse-proxy",
      { ...base, dependsOn: [chat.container, consoleApp.container, gateway.container] },
      opts,
    );
    containers.push(proxy.container);
    components.push(proxy);
  }

  const outputs: PlatformOutputs = {
    urls: config.urls,
    traceLogin: pulumi.secret(
      secrets.values.traceInitUserPassword.apply((password) => ({
        email: stack.traceAdminEmail,
        password,
      })),
    ),
    dashboardsLogin: pulumi.secret(
      secrets.values.dashboardAdminPassword.apply((password) => ({
        user: env.DASHBOARD_ADMIN_USER,
        password,
      })),
    ),
    gatewayMasterKey: secrets.values.gatewayMasterKey,
    dataVolumes: pulumi.all(containers.map((c) => c.volumes)).apply((mounts) => {
      const names = mounts.flatMap((m) => (m ?? []).flatMap((v) => (v.volumeName ? [v.volumeName] : [])));
      return [...new Set(names)].sort();
    }),
  };
  return { outputs, provider, containers, components };
}
