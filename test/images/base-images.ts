/**
 * The base images a Dockerfile names, and stand-ins for them when no registry can be reached.
 *
 * A stand-in is a Debian bookworm rootfs (`debootstrap --variant=minbase`) with this machine's Node.js and npm
 * copied in, the machine's CA bundle (npm behind an intercepting proxy needs it; NODE_EXTRA_CA_CERTS points at
 * it), and a `node` user with uid 1000 as in the official Node images; it is `docker import`ed under the base
 * image's own name:tag, so the Dockerfile builds unchanged. The rootfs tarball is cached between runs in
 * {@link standInCacheDir}. Only `node:*` bases have a stand-in (every Dockerfile of this repository uses one).
 */
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
} from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { DockerEngine } from "./engine.js";

/**
 * The images a Dockerfile's FROM lines name, with `${ARG}` / `$ARG` replaced by the ARG defaults declared
 * before the first FROM (or `buildArgs`), and stage names (`FROM build`) left out.
 * @throws Error naming the line when a FROM uses an ARG without a value.
 */
export function baseImages(dockerfile: string, buildArgs: Record<string, string> = {}): string[] {
  const lines = dockerfile
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((l) => l.trim());
  const args: Record<string, string> = {};
  const stages = new Set<string>();
  const images: string[] = [];
  for (const line of lines) {
    const arg = /^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?/i.exec(line);
    if (arg?.[1] && images.length === 0) args[arg[1]] = buildArgs[arg[1]] ?? arg[2] ?? "";
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (!from?.[1]) continue;
    const image = from[1].replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => {
      const value = args[name];
      if (!value) throw new Error(`${line}: ARG ${name} has no default`);
      return value;
    });
    if (!stages.has(image) && image !== "scratch" && !images.includes(image)) images.push(image);
    if (from[2]) stages.add(from[2]);
  }
  return images;
}

/** Where the stand-in rootfs tarball is kept between runs (IMAGES_CACHE_DIR, else ~/.cache/ai-platform-images). */
export function standInCacheDir(): string {
  return process.env.IMAGES_CACHE_DIR ?? path.join(homedir(), ".cache", "ai-platform-images");
}

const DEBIAN_MIRROR = "http://deb.debian.org/debian";
const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** This machine's Node.js binary and npm package folder (what the stand-in copies). */
function hostNode(): { node: string; npm: string; version: string } {
  const node = execFileSync("sh", ["-c", 'readlink -f "$(command -v node)"'], { encoding: "utf8" }).trim();
  const npm = execFileSync("sh", ["-c", 'dirname "$(dirname "$(readlink -f "$(command -v npm)")")"'], {
    encoding: "utf8",
  }).trim();
  return { node, npm, version: process.version };
}

/**
 * Path of the cached stand-in rootfs tarball, made first when absent (debootstrap: a few minutes, once).
 * @throws Error when debootstrap fails (its output is shown as it runs).
 */
export function standInRootfs(): string {
  const { node, npm, version } = hostNode();
  const dir = standInCacheDir();
  const tarball = path.join(dir, `bookworm-minbase-node${version}.tar`);
  if (existsSync(tarball)) return tarball;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(path.join(dir, "rootfs-"));
  const root = path.join(work, "rootfs");
  try {
    process.stdout.write(
      `images: debootstrap --variant=minbase bookworm (cached afterwards in ${tarball})\n`,
    );
    execFileSync("debootstrap", ["--variant=minbase", "bookworm", root, DEBIAN_MIRROR], { stdio: "inherit" });
    copyFileSync(node, path.join(root, "usr/local/bin/node"));
    cpSync(npm, path.join(root, "usr/local/lib/node_modules/npm"), { recursive: true, dereference: true });
    for (const [bin, target] of [
      ["npm", "npm-cli.js"],
      ["npx", "npx-cli.js"],
    ] as const)
      execFileSync("ln", [
        "-sf",
        `../lib/node_modules/npm/bin/${target}`,
        path.join(root, "usr/local/bin", bin),
      ]);
    mkdirSync(path.join(root, "etc/ssl/certs"), { recursive: true });
    copyFileSync(CA_BUNDLE, path.join(root, CA_BUNDLE));
    // The official Node images' unprivileged user.
    appendFileSync(path.join(root, "etc/passwd"), "node:x:1000:1000::/home/node:/bin/sh\n");
    appendFileSync(path.join(root, "etc/group"), "node:x:1000:\n");
    mkdirSync(path.join(root, "home/node"));
    execFileSync("chown", ["1000:1000", path.join(root, "home/node")]);
    rmSync(path.join(root, "var/cache/apt/archives"), { recursive: true, force: true });
    execFileSync("tar", ["-C", root, "-cf", `${tarball}.part`, "."]);
    renameSync(`${tarball}.part`, tarball);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return tarball;
}

/**
 * Makes `image` available to the engine: already there, else pulled (when a registry answers within 30 s),
 * else a stand-in imported under the same name:tag.
 * @returns how it was made available.
 * @throws Error for a base other than `node:*` when it can neither be pulled nor stood in for.
 */
export function provideBaseImage(engine: DockerEngine, image: string): "present" | "pulled" | "stand-in" {
  if (engine.hasImage(image)) return "present";
  if (engine.docker(["pull", image], { timeoutMs: 30_000 }).status === 0) return "pulled";
  if (!/^(docker\.io\/)?(library\/)?node:/.test(image))
    throw new Error(`base image ${image} cannot be pulled and has no stand-in (only node:* images do)`);
  importStandIn(engine, image);
  return "stand-in";
}

/**
 * Imports the stand-in rootfs ({@link standInRootfs}: Debian bookworm with Node.js and npm) as `image`.
 * @throws Error with docker's output when the import fails.
 */
export function importStandIn(engine: DockerEngine, image: string): void {
  const tarball = standInRootfs();
  const imported = engine.docker(
    [
      "import",
      "--change",
      "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "--change",
      `ENV NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`,
      "--change",
      'CMD ["node"]',
      tarball,
      image,
    ],
    { timeoutMs: 300_000 },
  );
  if (imported.status !== 0) throw new Error(`docker import ${image} failed: ${imported.stderr}`);
}
