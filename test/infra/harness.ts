/**
 * Runs the Pulumi program under Pulumi's unit-test mocks (no CLI, no Docker engine) and records every
 * resource registration, so tests can assert the whole resource graph.
 *
 * Mocked outputs: random passwords resolve to `rnd-<name>`, random bytes to a fixed hex string derived from
 * the name, pulled images to `sha256:pulled-<name>`, built images to `sha256:built-<name>`. One build per
 * process (per test file): Pulumi URNs must be unique within a stack.
 */
import { createHash } from "node:crypto";
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll } from "vitest";
import type { PlatformConfig } from "../../infra/config.js";
import type { Platform } from "../../infra/platform.js";

/** One registration the mocked engine received. */
export interface Registered {
  type: string;
  name: string;
  /** Inputs with secrets unwrapped. */
  inputs: Record<string, unknown>;
  /** Inputs as the engine received them (secrets wrapped, see {@link isSecretValue}). */
  rawInputs: Record<string, unknown>;
  provider: string | undefined;
  custom: boolean;
}

/** A container's inputs as the engine saw them, plus its URN (which encodes the parent chain). */
export interface ContainerView {
  name: string;
  urn: string;
  image: string;
  env: Record<string, string>;
  ports: { internal: number; external: number; ip?: string; protocol?: string }[];
  healthcheck?: { tests: string[]; startPeriod?: string };
  restart?: string;
  mustRun?: boolean;
  memory?: number;
  platform?: string;
  volumes: { volumeName: string; containerPath: string }[];
  uploads: { file: string; content: string }[];
  networksAdvanced: { name: string; aliases: string[] }[];
  command?: string[];
  provider: string | undefined;
}

/** Mocked hex output of RandomBytes `name` with `length` bytes. */
export function mockHex(name: string, length: number): string {
  return createHash("sha256")
    .update(name)
    .digest("hex")
    .repeat(4)
    .slice(0, length * 2);
}

/** Everything one mocked run produced. */
export interface MockedRun {
  platform: Platform;
  registered: Registered[];
  containers: Map<string, ContainerView>;
  /** Resolves an output (test-side `await`). */
  value<T>(output: pulumi.Input<T>): Promise<T>;
}

const registered: Registered[] = [];
const retained = new Map<string, boolean>();
const ignored = new Map<string, string[]>();
const dependencies = new Map<string, string[]>();

/**
 * The `retainOnDelete` option each resource was registered with, by resource name. Pulumi's mocks do not pass
 * resource options to `newResource`, so the harness reads them off the registration requests.
 */
export function retainOnDelete(name: string): boolean | undefined {
  return retained.get(name);
}

/** The `ignoreChanges` option each resource was registered with, by resource name (see {@link retainOnDelete}). */
export function ignoreChanges(name: string): string[] | undefined {
  return ignored.get(name);
}

/**
 * The URNs a resource depends on (explicit `dependsOn` and resources whose outputs flow into its inputs), by
 * `type` and name, as the registration request carried them (see {@link retainOnDelete}).
 */
export function dependenciesOf(type: string, name: string): string[] {
  return dependencies.get(`${type}::${name}`) ?? [];
}

interface RegisterRequest {
  getName(): string;
  getType(): string;
  getDependenciesList(): string[];
  getRetainondelete(): boolean;
  getIgnorechangesList(): string[];
}

/** Pulumi's wire marker of a secret value: `{[SIG_KEY]: SECRET_SIG, value}`. */
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** Whether a registered input arrived as a secret. */
export function isSecretValue(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && (value as Record<string, unknown>)[SIG_KEY] === SECRET_SIG
  );
}

/** The value with every secret wrapper removed, recursively. */
export function plain(value: unknown): unknown {
  if (isSecretValue(value)) return plain((value as { value: unknown }).value);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/** Every registration so far (for programs not started through {@link runPlatform}). */
export function registrations(): readonly Registered[] {
  return registered;
}

/**
 * Provider state a test makes the mocked engine return for one resource (merged over the defaults), e.g. the
 * labels an existing volume already carries or the exit code of a one-shot container. `undefined`: defaults.
 */
export type StateOverride = (
  type: string,
  name: string,
  inputs: Record<string, unknown>,
) => Record<string, unknown> | undefined;

/**
 * Collects, for the whole test file, the errors that fail the program under Pulumi's Node.js language host (an
 * error thrown inside an output reaches it as an unhandled rejection) instead of letting vitest report them as
 * test failures. Call at the top level of a test file.
 * @returns the messages collected so far.
 */
export function collectProgramErrors(): () => string[] {
  const reasons: unknown[] = [];
  const collect = (reason: unknown) => reasons.push(reason);
  let vitestListeners: NodeJS.UnhandledRejectionListener[] = [];
  beforeAll(() => {
    vitestListeners = process.listeners("unhandledRejection");
    process.removeAllListeners("unhandledRejection");
    process.on("unhandledRejection", collect);
  });
  afterAll(() => {
    process.off("unhandledRejection", collect);
    for (const listener of vitestListeners) process.on("unhandledRejection", listener);
  });
  return () => reasons.map((r) => String(r instanceof Error ? r.message : r));
}

/**
 * Installs the mocks; call before importing anything that declares resources.
 * A container created with `attach` (one-shot) reports `exitCode` 0 unless `override` says otherwise.
 */
export async function installMocks(stack: string, override?: StateOverride): Promise<void> {
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        registered.push({
          type: args.type,
          name: args.name,
          inputs: plain(args.inputs) as Record<string, unknown>,
          rawInputs: args.inputs,
          provider: args.provider,
          custom: args.custom ?? false,
        });
        const extra: Record<string, unknown> = {};
        if (args.type === "random:index/randomPassword:RandomPassword") extra.result = `rnd-${args.name}`;
        if (args.type === "random:index/randomBytes:RandomBytes")
          extra.hex = mockHex(args.name, Number(args.inputs.length));
        if (args.type === "docker:index/remoteImage:RemoteImage")
          extra.imageId = `sha256:pulled-${args.name}`;
        if (args.type === "docker:index/image:Image") extra.repoDigest = `sha256:built-${args.name}`;
        if (args.type === "docker:index/container:Container" && args.inputs.attach === true)
          extra.exitCode = 0;
        const inputs = plain(args.inputs) as Record<string, unknown>;
        const state = { ...inputs, ...extra, ...override?.(args.type, args.name, inputs) };
        return { id: `${args.name}-id`, state };
      },
      call(args) {
        return args.inputs;
      },
    },
    "platform",
    stack,
    false,
  );
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    registerResource(req: RegisterRequest, callback: unknown): unknown;
  };
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, callback) => {
    retained.set(req.getName(), req.getRetainondelete());
    ignored.set(req.getName(), req.getIgnorechangesList());
    dependencies.set(`${req.getType()}::${req.getName()}`, req.getDependenciesList());
    return register(req, callback);
  };
}

function resolve<T>(output: pulumi.Input<T>): Promise<T> {
  return new Promise((done) => pulumi.output(output).apply((v) => done(v as T)));
}

/**
 * Builds the platform from `config` under the mocks and waits until every container is registered.
 * Imports the program lazily: a static import would run before the mocks are installed.
 */
export async function runPlatform(config: PlatformConfig): Promise<MockedRun> {
  const { buildPlatform } = await import("../../infra/platform.js");
  const platform = buildPlatform(config);
  const containers = new Map<string, ContainerView>();
  await Promise.all(
    platform.containers.map(async (c: docker.Container) => {
      const [urn, name] = await Promise.all([resolve(c.urn), resolve(c.name)]);
      const reg = registered.find(
        (r) => r.type === "docker:index/container:Container" && r.inputs.name === name,
      );
      if (!reg) throw new Error(`container ${name} was not registered`);
      const i = reg.inputs as Record<string, unknown>;
      const env: Record<string, string> = {};
      for (const entry of (i.envs as string[] | undefined) ?? []) {
        const at = entry.indexOf("=");
        env[entry.slice(0, at)] = entry.slice(at + 1);
      }
      containers.set(name, {
        name,
        urn,
        image: i.image as string,
        env,
        ports: (i.ports as ContainerView["ports"] | undefined) ?? [],
        healthcheck: i.healthcheck as ContainerView["healthcheck"],
        restart: i.restart as string | undefined,
        mustRun: i.mustRun as boolean | undefined,
        memory: i.memory as number | undefined,
        platform: i.platform as string | undefined,
        volumes: (i.volumes as ContainerView["volumes"] | undefined) ?? [],
        uploads: (i.uploads as ContainerView["uploads"] | undefined) ?? [],
        networksAdvanced: (i.networksAdvanced as ContainerView["networksAdvanced"] | undefined) ?? [],
        command: i.command as string[] | undefined,
        provider: reg.provider,
      });
    }),
  );
  await resolve(platform.outputs.traceLogin);
  return { platform, registered, containers, value: resolve };
}

/**
 * Declares the local stack with `.env.example` plus `env` under the installed mocks, without waiting for its
 * containers (for programs expected to fail part-way; see {@link collectProgramErrors}).
 */
export async function declareLocalStack(env: Record<string, string> = {}): Promise<Platform> {
  const { readFileSync } = await import("node:fs");
  const { parse } = await import("dotenv");
  const { parseConfig } = await import("../../infra/config.js");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const { buildPlatform } = await import("../../infra/platform.js");
  const example = parse(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  return buildPlatform(parseConfig(await stackSettings("local"), { ...example, ...env }));
}

/** The container named `name`, or a failed assertion. */
export function container(run: MockedRun, name: string): ContainerView {
  const c = run.containers.get(name);
  if (!c) throw new Error(`no container ${name}; have ${[...run.containers.keys()].join(", ")}`);
  return c;
}

/**
 * The `platform:` settings of `Pulumi.<stack>.yaml`, keys without the namespace (what loadConfig would read).
 */
export async function stackSettings(stack: string): Promise<Record<string, unknown>> {
  const { readFileSync } = await import("node:fs");
  const { parse } = await import("yaml");
  const { REPO_ROOT } = await import("../../infra/files.js");
  const doc = parse(readFileSync(`${REPO_ROOT}Pulumi.${stack}.yaml`, "utf8")) as {
    config?: Record<string, unknown>;
  };
  return Object.fromEntries(
    Object.entries(doc.config ?? {})
      .filter(([k]) => k.startsWith("platform:"))
      .map(([k, v]) => [k.slice("platform:".length), v]),
  );
}
