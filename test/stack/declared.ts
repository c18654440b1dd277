/**
 * What the Pulumi program declares for the `local` stack, as a plain description the stack rehearsal creates on a
 * real Docker engine: every network, volume and container with its resolved inputs, containers in the order
 * `pulumi up` may create them (each after everything it depends on).
 *
 * The description is read off the registrations the mocked engine received (test/infra/harness.ts), never
 * rewritten: an image reference is the one the program pulls or builds, env, command, ports, volume paths,
 * uploads and health checks are the program's own.
 */
import path from "node:path";
import type { Registered } from "../infra/harness.js";

const CONTAINER = "docker:index/container:Container";
const NETWORK = "docker:index/network:Network";
const VOLUME = "docker:index/volume:Volume";
const REMOTE_IMAGE = "docker:index/remoteImage:RemoteImage";
const BUILT_IMAGE = "docker:index/image:Image";

/** A declared bridge network. */
export interface DeclaredNetwork {
  name: string;
  driver: string;
  attachable: boolean;
}

/** A declared named volume and the labels it is created with. */
export interface DeclaredVolume {
  name: string;
  labels: Record<string, string>;
}

/** The image of a container: pulled by reference, or built by the program from a context and Dockerfile. */
export type DeclaredImage =
  | { kind: "pulled"; ref: string }
  | { kind: "built"; ref: string; context: string; dockerfile: string };

/** Docker's health check as declared: Docker's `test` form and Go durations ("30s"). */
export interface DeclaredHealthCheck {
  tests: string[];
  interval: string;
  timeout: string;
  startPeriod: string;
  retries: number;
}

/** One container with every input the rehearsal creates it with. */
export interface DeclaredContainer {
  name: string;
  image: DeclaredImage;
  /** `KEY=value` entries, in the program's order. */
  env: string[];
  command?: string[];
  entrypoint?: string[];
  user?: string;
  networks: { name: string; aliases: string[] }[];
  ports: { internal: number; external: number; ip: string; protocol: string }[];
  volumes: { volumeName: string; containerPath: string }[];
  uploads: { file: string; content: string }[];
  healthcheck?: DeclaredHealthCheck;
  /** Hard memory cap, MiB. */
  memoryMb?: number;
  restart: string;
  ulimits: { name: string; soft: number; hard: number }[];
  logDriver?: string;
  logOpts: Record<string, string>;
  /** Runs to completion (`attach`): `pulumi up` waits for it to exit. */
  oneShot: boolean;
  /** `pulumi up` waits until it is healthy before creating its dependents (`wait`), for this many seconds. */
  waitHealthySeconds?: number;
  /** Names of the containers it depends on (explicitly or through their outputs). */
  dependsOn: string[];
}

/** Everything the program declares that the rehearsal creates. */
export interface StackDescription {
  networks: DeclaredNetwork[];
  volumes: DeclaredVolume[];
  /** In creation order: every container after the containers it depends on. */
  containers: DeclaredContainer[];
}

/** How the harness's mocked engine reports image ids (test/infra/harness.ts). */
const PULLED_ID = /^sha256:pulled-(.+)$/;
const BUILT_ID = /^sha256:built-(.+)$/;

function imageOf(container: string, id: string, registered: readonly Registered[]): DeclaredImage {
  const pulled = PULLED_ID.exec(id);
  const built = BUILT_ID.exec(id);
  const reg = registered.find(
    (r) =>
      (pulled && r.type === REMOTE_IMAGE && r.name === pulled[1]) ||
      (built && r.type === BUILT_IMAGE && r.name === built[1]),
  );
  if (!reg) throw new Error(`${container}: image ${id} matches no declared image`);
  if (reg.type === REMOTE_IMAGE) return { kind: "pulled", ref: String(reg.inputs.name) };
  const build = reg.inputs.build as { context: string; dockerfile: string };
  return {
    kind: "built",
    ref: String(reg.inputs.imageName),
    context: path.resolve(build.context),
    dockerfile: path.resolve(build.dockerfile),
  };
}

function list<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.map(String) : undefined;
}

/**
 * Orders containers so each comes after its dependencies (stable: declaration order otherwise).
 * @throws Error naming the containers of a dependency cycle or an unknown dependency.
 */
export function creationOrder(containers: readonly DeclaredContainer[]): DeclaredContainer[] {
  const byName = new Map(containers.map((c) => [c.name, c]));
  const done = new Set<string>();
  const out: DeclaredContainer[] = [];
  const visit = (c: DeclaredContainer, path: string[]) => {
    if (done.has(c.name)) return;
    if (path.includes(c.name)) throw new Error(`dependency cycle: ${[...path, c.name].join(" → ")}`);
    for (const dep of c.dependsOn) {
      const d = byName.get(dep);
      if (!d) throw new Error(`${c.name} depends on ${dep}, which is not declared`);
      visit(d, [...path, c.name]);
    }
    done.add(c.name);
    out.push(c);
  };
  for (const c of containers) visit(c, []);
  return out;
}

/**
 * The stack description from the mocked registrations.
 * @param registered every registration of one mocked run (harness `registered`).
 * @param dependencies URNs each resource depended on, by type and name (harness `dependenciesOf`).
 * @param urnOf the URN of a container by name (harness ContainerView `urn`).
 * @throws Error when a container's image matches no declared image or its dependencies form a cycle.
 */
export function describeStack(
  registered: readonly Registered[],
  dependencies: (type: string, name: string) => string[],
  urnOf: (container: string) => string | undefined,
): StackDescription {
  const networks = registered
    .filter((r) => r.type === NETWORK)
    .map((r) => ({
      name: String(r.inputs.name),
      driver: String(r.inputs.driver ?? "bridge"),
      attachable: r.inputs.attachable === true,
    }));
  const volumes = registered
    .filter((r) => r.type === VOLUME)
    .map((r) => ({
      name: String(r.inputs.name),
      labels: Object.fromEntries(
        list<{ label: string; value: string }>(r.inputs.labels).map((l) => [l.label, l.value]),
      ),
    }));
  const regs = registered.filter((r) => r.type === CONTAINER);
  const nameByUrn = new Map<string, string>();
  for (const r of regs) {
    const urn = urnOf(String(r.inputs.name));
    if (urn) nameByUrn.set(urn, String(r.inputs.name));
  }
  const containers = regs.map((r): DeclaredContainer => {
    const i = r.inputs;
    const name = String(i.name);
    const hc = i.healthcheck as DeclaredHealthCheck | undefined;
    const deps = dependencies(CONTAINER, r.name).flatMap((urn) => nameByUrn.get(urn) ?? []);
    return {
      name,
      image: imageOf(name, String(i.image), registered),
      env: strings(i.envs) ?? [],
      ...(strings(i.command) ? { command: strings(i.command) } : {}),
      ...(strings(i.entrypoints) ? { entrypoint: strings(i.entrypoints) } : {}),
      ...(typeof i.user === "string" ? { user: i.user } : {}),
      networks: list<{ name: string; aliases?: string[] }>(i.networksAdvanced).map((n) => ({
        name: n.name,
        aliases: n.aliases ?? [],
      })),
      ports: list<DeclaredContainer["ports"][number]>(i.ports).map((p) => ({
        internal: Number(p.internal),
        external: Number(p.external),
        ip: p.ip ?? "0.0.0.0",
        protocol: p.protocol ?? "tcp",
      })),
      volumes: list<DeclaredContainer["volumes"][number]>(i.volumes).map((v) => ({
        volumeName: v.volumeName,
        containerPath: v.containerPath,
      })),
      uploads: list<{ file: string; content: string }>(i.uploads).map((u) => ({
        file: u.file,
        content: u.content,
      })),
      ...(hc
        ? {
            healthcheck: {
              tests: hc.tests,
              interval: hc.interval,
              timeout: hc.timeout,
              startPeriod: hc.startPeriod,
              retries: hc.retries,
            },
          }
        : {}),
      ...(typeof i.memory === "number" ? { memoryMb: i.memory } : {}),
      restart: String(i.restart ?? "no"),
      ulimits: list(i.ulimits),
      ...(typeof i.logDriver === "string" ? { logDriver: i.logDriver } : {}),
      logOpts: (i.logOpts as Record<string, string> | undefined) ?? {},
      oneShot: i.attach === true,
      ...(i.wait === true ? { waitHealthySeconds: Number(i.waitTimeout ?? 60) } : {}),
      dependsOn: [...new Set(deps)].filter((d) => d !== name),
    };
  });
  return { networks, volumes, containers: creationOrder(containers) };
}

/**
 * Runs the program for the `local` stack under the harness's mocks with `env` as its .env (default the shipped
 * `.env.example`) and describes what it declares. Once per process (Pulumi URNs must be unique within a stack).
 */
export async function declaredLocalStack(env?: Record<string, string>): Promise<StackDescription> {
  const { readFileSync } = await import("node:fs");
  const { parse } = await import("dotenv");
  const harness = await import("../infra/harness.js");
  await harness.installMocks("local");
  const { parseConfig } = await import("../../infra/config.js");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const dotenv = env ?? parse(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  const run = await harness.runPlatform(parseConfig(await harness.stackSettings("local"), dotenv));
  return describeStack(run.registered, harness.dependenciesOf, (name) => run.containers.get(name)?.urn);
}
