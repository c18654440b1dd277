/**
 * Builds one image the Pulumi program builds (`docker.Image`), as `pulumi up` would: its Dockerfile's base images
 * provided first (pulled, or stood in for when no registry answers; ./base-images.ts), then the classic builder
 * with the declared context, Dockerfile and tag. Used by the image suite and the stack rehearsal.
 */
import { readFileSync } from "node:fs";
import { baseImages, provideBaseImage } from "./base-images.js";
import type { DockerEngine } from "./engine.js";

/** A declared build: tag (`platform/<name>:local`), absolute context folder and Dockerfile. */
export interface DeclaredBuild {
  imageName: string;
  context: string;
  dockerfile: string;
}

/**
 * Builds `d` on `engine`, streaming the build's output.
 * @returns docker build's exit status and the last 4 KB of its output.
 * @throws Error when a base image can neither be pulled nor stood in for.
 */
export async function buildDeclaredImage(
  engine: DockerEngine,
  d: DeclaredBuild,
  timeoutMs = 20 * 60_000,
): Promise<{ status: number; tail: string }> {
  for (const base of baseImages(readFileSync(d.dockerfile, "utf8")))
    process.stdout.write(`images: ${base}: ${provideBaseImage(engine, base)}\n`);
  return engine.dockerStreamed(
    ["build", "--network", "host", "-f", d.dockerfile, "-t", d.imageName, d.context],
    timeoutMs,
  );
}
