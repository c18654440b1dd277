/**
 * Images this repository builds (gateway, console, scanner): tag `local`, never pushed.
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import * as docker from "@pulumi/docker";
import type * as pulumi from "@pulumi/pulumi";
import { REPO_ROOT } from "./files.js";

/** Tag of every locally built image. */
export const LOCAL_TAG = "local";

/** Build context of every local image: the repository root (npm workspaces, one package-lock.json). */
export const BUILD_CONTEXT = REPO_ROOT;

/**
 * Refuses a build whose Dockerfile or context is missing, as the provider's Check would fail the preview, but
 * naming the file and the folder it was looked for in.
 * @param dockerfile path relative to `root`, e.g. `services/gateway/Dockerfile`.
 * @param root the build context (the repository root).
 * @throws Error naming the missing context folder or Dockerfile.
 */
export function requireBuildInputs(dockerfile: string, root: string = BUILD_CONTEXT): void {
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new Error(`build context ${root} is missing: no image can be built`);
  if (!existsSync(path.join(root, dockerfile)) || !statSync(path.join(root, dockerfile)).isFile())
    throw new Error(`${dockerfile} is missing (looked in ${root}): the image cannot be built`);
}

/**
 * Declares a local image build of `platform/<name>:local` from `dockerfile` (relative to the repository root).
 *
 * pulumi-docker hashes the build context (minus `.dockerignore`) and rebuilds when it changes; the container
 * then receives the new image ID through `repoDigest`, so a source or litellm/config.yaml change replaces it on
 * the next `pulumi up` (no manual rebuild step).
 * @param root the build context; tests point it elsewhere.
 * @throws Error when the Dockerfile or the context is missing (see {@link requireBuildInputs}).
 */
export function localImage(
  parent: pulumi.Resource,
  name: string,
  dockerfile: string,
  platform: string | undefined,
  root: string = BUILD_CONTEXT,
): docker.Image {
  requireBuildInputs(dockerfile, root);
  // Relative to where Pulumi runs (the project root) so the state does not depend on the checkout's location.
  const context = path.relative(process.cwd(), root) || ".";
  return new docker.Image(
    `${name}-build`,
    {
      imageName: `platform/${name}:${LOCAL_TAG}`,
      build: {
        context,
        dockerfile: path.join(context, dockerfile),
        builderVersion: "BuilderBuildKit",
        ...(platform ? { platform } : {}),
      },
      skipPush: true,
    },
    { parent },
  );
}
