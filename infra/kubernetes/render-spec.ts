/**
 * The second renderer of a service description: a Docker `ServiceSpec` (infra/container.ts, made by the
 * `…Spec` functions of infra/*.ts) becomes a Kubernetes {@link WorkloadSpec} plus the content of its Secret and
 * ConfigMap. Plain env strings stay env literals; every `pulumi.Output` env value (secrets, URLs carrying a
 * password) moves into the Secret `<service>-env`; a secret inside the command becomes a `$(VAR)` reference to
 * that env (Kubernetes expands it; core/v1 Container `args`).
 */
import * as pulumi from "@pulumi/pulumi";
import type { ServiceSpec } from "../container.js";
import type { Upload } from "../files.js";
import type { PodFacts } from "./pod-facts.js";
import type { WorkloadSpec } from "./workload.js";

/** Config files that carry a secret once rendered (scrape token, webhook URL): always mounted from the Secret. */
export const SECRET_FILE_PATHS: readonly string[] = [
  "/etc/prometheus/prometheus.yml",
  "/etc/alertmanager/alertmanager.yml",
];

/** A ServiceSpec rendered for the cluster. */
export interface RenderedSpec {
  workload: WorkloadSpec;
  /** Content of the Secret `<service>-env` (env name → value). */
  secretEnv: Record<string, pulumi.Input<string>>;
  /** Content of the ConfigMap `<service>-files` (key → file text). */
  files: Record<string, string>;
  /** Content of the Secret `<service>-files` (key → file text). */
  secretFiles: pulumi.Output<Record<string, string>>;
}

/** ConfigMap/Secret key of a container path (keys allow only `-._a-zA-Z0-9`). */
export function fileKey(containerPath: string): string {
  return containerPath.replace(/^\//, "").replace(/[^-._a-zA-Z0-9]/g, "_");
}

/**
 * @param image the reference the cluster pulls (a pinned tag, or our image's digest in the operator's registry).
 * @throws Error when the command holds a secret that no env of the spec carries (it would show in the pod spec).
 */
export function renderSpec(spec: ServiceSpec, facts: PodFacts, image: pulumi.Input<string>): RenderedSpec {
  const env: Record<string, string> = {};
  const secretEnv: Record<string, pulumi.Input<string>> = {};
  for (const [key, value] of Object.entries({ ...spec.env, ...facts.env })) {
    if (typeof value === "string") env[key] = value;
    else secretEnv[key] = value;
  }
  const args = spec.command?.map((part) => {
    if (typeof part === "string") return part;
    const carrier = Object.entries(secretEnv).find(([, value]) => value === part)?.[0];
    if (!carrier) throw new Error(`${spec.name}: a secret in the command has no env to carry it`);
    return `$(${carrier})`;
  });

  const files: Record<string, string> = {};
  const fileMounts: Record<string, string> = {};
  const secretMounts: Record<string, string> = {};
  const secretUploads: pulumi.Output<Upload>[] = [];
  for (const upload of spec.uploads ?? []) {
    if (pulumi.Output.isInstance(upload)) {
      secretUploads.push(upload as pulumi.Output<Upload>);
      continue;
    }
    const { file, content } = upload as Upload;
    if (SECRET_FILE_PATHS.includes(file)) secretUploads.push(pulumi.secret(pulumi.output({ file, content })));
    else {
      files[fileKey(file)] = content;
      fileMounts[file] = fileKey(file);
    }
  }
  for (const path of SECRET_FILE_PATHS)
    if (secretUploads.length > 0 && spec.name === ownerOf(path)) secretMounts[path] = fileKey(path);
  const secretFiles = pulumi
    .all(secretUploads)
    .apply((list) => Object.fromEntries(list.map((u) => [fileKey(u.file), u.content])));

  const workload: WorkloadSpec = {
    name: spec.name,
    image,
    ...(spec.entrypoint ? { command: spec.entrypoint } : {}),
    ...(args ? { args } : {}),
    ...(spec.publish?.[0] || facts.port ? { port: spec.publish?.[0]?.internal ?? facts.port } : {}),
    ...(facts.extraPorts ? { extraPorts: facts.extraPorts } : {}),
    env,
    secretEnv: Object.keys(secretEnv),
    healthcheck: spec.healthcheck ?? { test: ["CMD", "true"] },
    memoryMb: spec.memoryMb ?? facts.memoryMb,
    cpuMillis: facts.cpuMillis,
    ...(spec.volumes ? { volumes: spec.volumes, volumeGi: facts.volumeGi ?? 10 } : {}),
    ...(facts.scratch ? { scratch: facts.scratch } : {}),
    ...(Object.keys(fileMounts).length > 0 ? { files: fileMounts } : {}),
    ...(Object.keys(secretMounts).length > 0 ? { secretFiles: secretMounts } : {}),
    uid: facts.uid,
    readOnlyRoot: facts.readOnlyRoot ?? false,
  };
  return { workload, secretEnv, files, secretFiles };
}

/** The service whose config file `path` is. */
function ownerOf(path: string): string {
  return path.startsWith("/etc/prometheus/") ? "metrics" : "alertmanager";
}
