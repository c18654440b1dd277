/**
 * Creates a declared stack (./declared.ts) on a Docker engine through the Engine API (dockerode), input for
 * input as the Pulumi docker provider would: networks, volumes, then each container in creation order with its
 * image, name, env, command, entrypoint, user, network aliases, published ports, volumes, uploaded files, health
 * check, memory cap, ulimits, restart policy and log options. A one-shot container is waited for (exit 0), a
 * container the program waits on (`wait`) must turn healthy before the next one is created.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { pack } from "tar-stream";
import type { DeclaredContainer, StackDescription } from "./declared.js";

/** Go duration ("30s", "1m30s", "500ms") in nanoseconds, as the Engine API takes health-check timings. */
export function goDurationNs(value: string): number {
  const units: Record<string, number> = { h: 3600e9, m: 60e9, s: 1e9, ms: 1e6, us: 1e3, ns: 1 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)/g;
  let matched = "";
  for (const m of value.matchAll(re)) {
    total += Number(m[1]) * (units[m[2] ?? "s"] ?? 0);
    matched += m[0];
  }
  if (matched !== value || value === "") throw new Error(`not a Go duration: ${JSON.stringify(value)}`);
  return total;
}

/** A tar archive (for PUT /containers/{id}/archive) of `files`: absolute path → content and owner. */
export async function tarOf(
  files: { path: string; content: Buffer | string; uid?: number }[],
): Promise<Buffer> {
  const archive = pack();
  for (const f of files)
    archive.entry(
      { name: f.path.replace(/^\/+/, ""), mode: 0o644, uid: f.uid ?? 0, gid: f.uid ?? 0 },
      typeof f.content === "string" ? Buffer.from(f.content) : f.content,
    );
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The Engine API's create body for one declared container. */
export function createOptions(c: DeclaredContainer): Docker.ContainerCreateOptions {
  const [first, ...others] = c.networks;
  const portKey = (p: DeclaredContainer["ports"][number]) => `${p.internal}/${p.protocol}`;
  const hc = c.healthcheck;
  if (others.length > 0)
    throw new Error(
      `${c.name}: the rehearsal joins one network at create time; it declares ${c.networks.length}`,
    );
  return {
    name: c.name,
    Image: c.image.ref,
    Env: c.env,
    ...(c.command ? { Cmd: c.command } : {}),
    ...(c.entrypoint ? { Entrypoint: c.entrypoint } : {}),
    ...(c.user ? { User: c.user } : {}),
    ExposedPorts: Object.fromEntries(c.ports.map((p) => [portKey(p), {}])),
    ...(hc
      ? {
          Healthcheck: {
            Test: hc.tests,
            Interval: goDurationNs(hc.interval),
            Timeout: goDurationNs(hc.timeout),
            StartPeriod: goDurationNs(hc.startPeriod),
            Retries: hc.retries,
          },
        }
      : {}),
    HostConfig: {
      PortBindings: Object.fromEntries(
        c.ports.map((p) => [portKey(p), [{ HostIp: p.ip, HostPort: String(p.external) }]]),
      ),
      Mounts: c.volumes.map((v) => ({ Type: "volume", Source: v.volumeName, Target: v.containerPath })),
      ...(c.memoryMb ? { Memory: c.memoryMb * 1024 * 1024 } : {}),
      RestartPolicy: { Name: c.restart === "no" ? "" : c.restart },
      Ulimits: c.ulimits.map((u) => ({ Name: u.name, Soft: u.soft, Hard: u.hard })),
      ...(c.logDriver ? { LogConfig: { Type: c.logDriver, Config: c.logOpts } } : {}),
      ...(first ? { NetworkMode: first.name } : {}),
    },
    ...(first ? { NetworkingConfig: { EndpointsConfig: { [first.name]: { Aliases: first.aliases } } } } : {}),
  };
}

/** A container's health status, or its state when it has no health check. */
export async function healthOf(docker: Docker, name: string): Promise<string> {
  const info = await docker.getContainer(name).inspect();
  return info.State.Health?.Status ?? info.State.Status;
}

/** The last lines of a container's log (stdout and stderr), of all or only those since `since` (unix seconds). */
export async function logTail(docker: Docker, name: string, lines = 30, since?: number): Promise<string> {
  const raw = (await docker
    .getContainer(name)
    .logs({ stdout: true, stderr: true, tail: lines, ...(since === undefined ? {} : { since }) })) as Buffer;
  // Strip the 8-byte multiplexing headers of a non-TTY stream.
  const out: string[] = [];
  for (let i = 0; i + 8 <= raw.length; ) {
    const size = raw.readUInt32BE(i + 4);
    out.push(raw.subarray(i + 8, i + 8 + size).toString("utf8"));
    i += 8 + size;
  }
  return out.join("");
}

/**
 * Waits until `name` is healthy.
 * @throws Error with its last health-check outputs and log when it is not within `timeoutMs`, or exits.
 */
export async function waitHealthy(docker: Docker, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await docker.getContainer(name).inspect();
    if (info.State.Health?.Status === "healthy") return;
    if (!info.State.Running || Date.now() > deadline) {
      const probes = (info.State.Health?.Log ?? []).map((l) => `exit ${l.ExitCode}: ${l.Output.trim()}`);
      throw new Error(
        `${name} is ${info.State.Health?.Status ?? info.State.Status} (exit code ${info.State.ExitCode}) after ${Math.round((timeoutMs - (deadline - Date.now())) / 1000)} s; health-check outputs:\n${probes.join("\n")}\nlog:\n${await logTail(docker, name)}`,
      );
    }
    await sleep(1000);
  }
}

/** Files put into a container's volumes before it starts (data an operator seeds, e.g. an offline model). */
export type Seeds = Record<string, { path: string; content: Buffer; uid?: number }[]>;

/**
 * Creates every network, volume and container of `stack` on `docker` and starts the containers, in order.
 * Removes same-named leftovers of an earlier run first (containers, then networks and, unless `keepVolumes`,
 * volumes: with it, the volumes of an earlier creation are used again as `pulumi up` would, data and all).
 * @throws Error when a one-shot container exits non-zero or a waited-on container is not healthy in time.
 */
export async function createStack(
  docker: Docker,
  stack: StackDescription,
  options: {
    seeds?: Seeds;
    /** Caps nofile ulimits (the engine's own hard limit, when the machine cannot raise it); logged when applied. */
    nofileCap?: number;
    log?: (line: string) => void;
    /** Keep existing volumes (a second creation on the same data). */
    keepVolumes?: boolean;
  } = {},
): Promise<void> {
  const { seeds = {}, nofileCap, log = () => {}, keepVolumes = false } = options;
  for (const c of [...stack.containers].reverse())
    await docker
      .getContainer(c.name)
      .remove({ force: true })
      .catch(() => {});
  for (const n of stack.networks)
    await docker
      .getNetwork(n.name)
      .remove()
      .catch(() => {});
  if (!keepVolumes)
    for (const v of stack.volumes)
      await docker
        .getVolume(v.name)
        .remove()
        .catch(() => {});

  for (const n of stack.networks)
    await docker.createNetwork({ Name: n.name, Driver: n.driver, Attachable: n.attachable });
  // Creating a volume that exists (keepVolumes) returns it unchanged.
  for (const v of stack.volumes) await docker.createVolume({ Name: v.name, Labels: v.labels });

  for (const c of stack.containers) {
    const body = createOptions(c);
    for (const u of body.HostConfig?.Ulimits ?? [])
      if (nofileCap !== undefined && u.Name === "nofile" && (u.Hard ?? 0) > nofileCap) {
        log(`${c.name}: nofile ulimit ${u.Soft}:${u.Hard} capped to ${nofileCap} (the engine's hard limit)`);
        u.Soft = Math.min(u.Soft ?? 0, nofileCap);
        u.Hard = nofileCap;
      }
    const container = await docker.createContainer(body);
    const files = [
      ...c.uploads.map((u) => ({ path: u.file, content: Buffer.from(u.content) })),
      ...(seeds[c.name] ?? []),
    ];
    if (files.length > 0) await container.putArchive(await tarOf(files), { path: "/" });
    await container.start();
    log(`created ${c.name} (${c.image.ref})`);
    if (c.oneShot) {
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      if (StatusCode !== 0)
        throw new Error(`${c.name} exited with ${StatusCode}:\n${await logTail(docker, c.name)}`);
    }
    if (c.waitHealthySeconds !== undefined) await waitHealthy(docker, c.name, c.waitHealthySeconds * 1000);
  }
}
