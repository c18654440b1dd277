/**
 * Images this repository builds (gateway, console, scanner): tag `local`, never pushed.
 */
import path from "node:path";
import * as docker from "@pulumi/docker";
import type * as pulumi from "@pulumi/pulumi";
import { REPO_ROOT } from "./files.js";

/** Tag of every locally built image. */
export const LOCAL_TAG = "local";

/** Build context of every local image: the repository root (npm workspaces, one package-lock.json). */
export const BUILD_CONTEXT = REPO_ROOT;

/**
 * Declares a local image build of `platform/<name>:local` from `dockerfile` (relative to the repository root).
 *
 * pulumi-docker hashes the build context (minus `.dockerignore`) and rebuilds when it changes; the container
 * then receives the new image ID through `repoDigest`, so a source or litellm/config.yaml change replaces it on
 * the next `pulumi up` (no manual rebuild step).
 */
export function localImage(
  parent: pulumi.Resource,
  name: string,
  dockerfile: string,
  platform: string | undefined,
): docker.Image {
  // Relative to where Pulumi runs (the project root) so the state does not depend on the checkout's location.
  const context = path.relative(process.cwd(), BUILD_CONTEXT) || ".";
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
