/**
 * The one way this program declares a container: name and network alias from SERVICES (infra/config.ts), a
 * pinned or locally built image, a health check that can run inside that image, a restart policy, named volumes, capped logs.
 */
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { ServiceName } from "./config.js";
import type { Upload } from "./files.js";
import { LOCAL_IMAGE_TOOLS, type ProbeTool } from "./images.js";
import { checkedPassword, credentialLabels, type VolumeCredential } from "./volume-credential.js";

/** A Docker health check. `test` is Docker's form: `["CMD", prog, ...args]` or `["CMD-SHELL", script]`. */
export interface HealthCheck {
  test: string[];
  /** Grace period before failures count, e.g. "180s" for slow starters (Langfuse migrations, model download). */
  startPeriod?: string;
  interval?: string;
  timeout?: string;
  retries?: number;
}

/** Probe program of an HTTP check: busybox/GNU wget, curl, or `node -e fetch(...)` for images with neither. */
export type HttpProbe = "wget" | "curl" | "node";

/**
 * An HTTP health check for `url` (use 127.0.0.1: `localhost` may resolve to ::1 where the app is not bound).
 * Succeeds on a 2xx answer.
 */
export function httpCheck(
  probe: HttpProbe,
  url: string,
  timing: Omit<HealthCheck, "test"> = {},
): HealthCheck {
  const test: Record<HttpProbe, string[]> = {
    wget: ["CMD", "wget", "-q", "-O", "/dev/null", url],
    curl: ["CMD", "curl", "-fsS", "-o", "/dev/null", url],
    node: [
      "CMD",
      "node",
      "-e",
      `fetch(${JSON.stringify(url)}).then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))`,
    ],
  };
  return { test: test[probe], ...timing };
}

/** The programs a health check needs: the CMD program, or `sh` plus every program of a CMD-SHELL pipeline. */
export function probeTools(check: HealthCheck): string[] {
  const [form, ...rest] = check.test;
  if (form === "CMD") return rest[0] === undefined ? [] : [rest[0]];
  if (form === "CMD-SHELL") {
    const programs = (rest[0] ?? "")
      .split(/\||&&|\|\||;/)
      .map((part) => part.trim().split(/\s+/)[0] ?? "")
      .filter((p) => p !== "" && p !== "exit" && p !== "test" && p !== "[");
    return ["sh", ...programs];
  }
  throw new Error(`health check test must start with CMD or CMD-SHELL, got ${form}`);
}

/** An image for a container: a pinned third-party reference to pull, or an image this stack builds. */
export type ImageSource =
  | { pull: string; tools: readonly ProbeTool[] }
  | { built: docker.Image; tools?: readonly ProbeTool[] };

/** Where containers attach and publish, shared by every component. */
export interface ContainerContext {
  /** The stack's network; every container joins it with its service name as alias. */
  network: docker.Network;
  /** Name of an existing external network the apps also join (SHARED_NETWORK), if any. */
  sharedNetwork?: string;
  /** Host address published ports bind to. */
  bindAddress: string;
  /** Forced platform per service (arm64 hosts pulling amd64-only images). */
  platforms: Partial<Record<string, string>>;
  /** Prefix of volume names, e.g. `platform` → `platform-relational-db-data`. */
  volumePrefix: string;
  /** Whether volumes outlive `pulumi destroy` (retainOnDelete); default true. */
  retainVolumes?: boolean;
}

/** What a component says about one of its containers. */
export interface ServiceSpec {
  /** Service name from SERVICES (or `reverse-proxy`): container name and network alias. */
  name: ServiceName | "reverse-proxy";
  image: ImageSource;
  env?: Record<string, pulumi.Input<string>>;
  command?: pulumi.Input<string>[];
  entrypoint?: string[];
  /** Container port → host port. Only the seven of HOST_PORTS (and the proxy's 80/443) may appear anywhere. */
  publish?: { internal: number; external: number; protocol?: "tcp" | "udp" }[];
  /** Named volumes: key (volume `<prefix>-<service>-<key>`) → path inside the container. */
  volumes?: Record<string, string>;
  /**
   * The password one of `volumes` is initialised with (databases that apply it to an empty volume only): the
   * volume records it, and a different one later is refused (infra/volume-credential.ts).
   */
  volumeCredential?: VolumeCredential;
  uploads?: pulumi.Input<Upload>[];
  /** Required for long-running containers; one-shot containers have none. */
  healthcheck?: HealthCheck;
  /** Runs to completion once (e.g. bucket creation): no restart, not re-run on later `up`s. */
  oneShot?: boolean;
  /** Hard memory cap, MiB. */
  memoryMb?: number;
  /** Join SHARED_NETWORK too (the apps: chat, console, gateway). */
  shared?: boolean;
  /** Wait for "healthy" before dependents are created (datastores). */
  waitHealthy?: boolean;
  waitTimeoutSeconds?: number;
  ulimits?: { name: string; soft: number; hard: number }[];
  user?: string;
  dependsOn?: pulumi.Resource[];
}

/** The container and what came with it. */
export interface ServiceResources {
  container: docker.Container;
  volumes: docker.Volume[];
  /** The pulled image, when the source was `pull`. */
  remoteImage?: docker.RemoteImage;
}

/**
 * Declares a service container (and its pulled image and named volumes) as children of `parent`.
 * @throws Error when a long-running container has no health check, a one-shot one has one, or the health
 *   check needs a program the image does not have (see IMAGES in infra/images.ts).
 */
export function serviceContainer(
  parent: pulumi.Resource,
  ctx: ContainerContext,
  spec: ServiceSpec,
): ServiceResources {
  const opts: pulumi.CustomResourceOptions = { parent };
  const platform = ctx.platforms[spec.name];

  if (!spec.oneShot && !spec.healthcheck)
    throw new Error(`${spec.name}: a long-running container needs a health check`);
  if (spec.oneShot && spec.healthcheck)
    throw new Error(`${spec.name}: a one-shot container takes no health check`);
  if (spec.healthcheck) {
    const available: readonly string[] =
      "pull" in spec.image ? spec.image.tools : (spec.image.tools ?? LOCAL_IMAGE_TOOLS);
    const missing = probeTools(spec.healthcheck).filter((tool) => !available.includes(tool));
    if (missing.length > 0)
      throw new Error(
        `${spec.name}: health check needs ${missing.join(", ")}, not in the image (has ${available.join(", ")})`,
      );
  }

  let remoteImage: docker.RemoteImage | undefined;
  let image: pulumi.Input<string>;
  if ("pull" in spec.image) {
    remoteImage = new docker.RemoteImage(
      `${spec.name}-image`,
      { name: spec.image.pull, keepLocally: true, ...(platform ? { platform } : {}) },
      opts,
    );
    image = remoteImage.imageId;
  } else {
    // The built image's ID (sha256:…), not its tag: a rebuild changes it and so replaces the container.
    image = spec.image.built.repoDigest;
  }

  const env = { ...spec.env };
  const credential = spec.volumeCredential;
  const credentialPassword = credential ? env[credential.env] : undefined;
  if (credential && (credentialPassword === undefined || spec.volumes?.[credential.volume] === undefined))
    throw new Error(
      `${spec.name}: volumeCredential names no env ${credential.env} or volume ${credential.volume}`,
    );

  const volumes = Object.entries(spec.volumes ?? {}).map(([key, containerPath]) => {
    const name = `${ctx.volumePrefix}-${spec.name}-${key}`;
    const records = credentialPassword !== undefined && key === credential?.volume;
    // Data outlives `pulumi destroy` unless the stack sets dropVolumesOnDestroy (docs/operations.md). A later
    // `up` adopts the kept volume (Docker's volume create returns an existing volume of that name).
    const volume = new docker.Volume(
      `${spec.name}-${key}`,
      { name, ...(records ? { labels: credentialLabels(name, credentialPassword) } : {}) },
      {
        ...opts,
        retainOnDelete: ctx.retainVolumes ?? true,
        ...(records ? { ignoreChanges: ["labels"] } : {}),
      },
    );
    if (records && credential)
      env[credential.env] = checkedPassword(spec.name, volume, name, credentialPassword, credential);
    return [volume, containerPath] as const;
  });

  const networks: docker.types.input.ContainerNetworksAdvanced[] = [
    { name: ctx.network.name, aliases: [spec.name] },
  ];
  if (spec.shared && ctx.sharedNetwork) networks.push({ name: ctx.sharedNetwork, aliases: [spec.name] });

  const envs = Object.keys(env)
    .sort()
    .map((key) => pulumi.interpolate`${key}=${env[key]}`);

  const hc = spec.healthcheck;
  const container = new docker.Container(
    spec.name,
    {
      name: spec.name,
      image,
      envs,
      command: spec.command,
      entrypoints: spec.entrypoint,
      networksAdvanced: networks,
      ports: (spec.publish ?? []).map((p) => ({
        internal: p.internal,
        external: p.external,
        ip: ctx.bindAddress,
        protocol: p.protocol ?? "tcp",
      })),
      volumes: volumes.map(([volume, containerPath]) => ({ volumeName: volume.name, containerPath })),
      uploads: spec.uploads,
      healthcheck: hc
        ? {
            tests: hc.test,
            interval: hc.interval ?? "30s",
            timeout: hc.timeout ?? "10s",
            startPeriod: hc.startPeriod ?? "30s",
            retries: hc.retries ?? 5,
          }
        : undefined,
      restart: spec.oneShot ? "no" : "unless-stopped",
      mustRun: !spec.oneShot,
      attach: spec.oneShot ? true : undefined,
      wait: spec.waitHealthy ?? false,
      waitTimeout: spec.waitHealthy ? (spec.waitTimeoutSeconds ?? 120) : undefined,
      memory: spec.memoryMb,
      ulimits: spec.ulimits,
      user: spec.user,
      platform,
      logDriver: "json-file",
      logOpts: { "max-size": "10m", "max-file": "3" },
    },
    { ...opts, dependsOn: spec.dependsOn },
  );
  return { container, volumes: volumes.map(([v]) => v), remoteImage };
}

/**
 * Turns `KEY=value` env entries into a map (tests and wiring checks read containers back this way).
 * Values may contain `=`; only the first one separates.
 */
export function envMap(envs: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of envs ?? []) {
    const i = entry.indexOf("=");
    if (i > 0) out[entry.slice(0, i)] = entry.slice(i + 1);
  }
  return out;
}
