/**
 * The peer in `npm run bench`: Portkey's open-source AI gateway (`@portkey-ai/gateway` from npm, a root
 * devDependency) in its own process, routing to the same fake upstream as the other targets. Started as its
 * package's bin does (`build/start-server.js --port=<n> --headless`, a Node server via @hono/node-server). Each
 * request names its provider and key as the package README's quickstart does (`provider: "openai"` and the
 * provider's `Authorization`, which its SDK sends as the `x-portkey-provider` and `authorization` headers) and
 * the upstream in `x-portkey-custom-host: <upstream base URL with /v1>` (the header the server reads for a
 * provider's custom host, build/start-server.js). It has no virtual keys, budgets or spend records here: a routing gateway, closer to the
 * pass-through than to the full pipeline.
 *
 * Streams are left out: version 1.15.2 on Node 20 answers every `stream: true` request with 500 ("Something
 * went wrong"; its log: `TypeError: immutable` from `Headers.append` in its `updateHeaders`, appending to the
 * headers of a fetched Response, which undici makes immutable), so the peer is measured on plain completions.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freePort, repoRoot, type Service, spawnService, waitForHttp } from "./children.js";
import type { Target } from "./load.js";

/** Where npm puts the package's server (its `bin`). */
export const portkeyEntry = join(repoRoot, "node_modules/@portkey-ai/gateway/build/start-server.js");

/**
 * Starts Portkey's gateway on a free port of this machine and resolves once it answers `GET /`.
 * @param upstreamUrl the fake upstream's base URL, e.g. `http://127.0.0.1:4100/v1`
 * @param upstreamKey the upstream's Bearer key (Portkey forwards it)
 * @throws Error when the package is not installed or the server does not come up (with its output)
 */
export async function startPortkey(
  upstreamUrl: string,
  upstreamKey: string,
  nodeFlags: string[] = [],
): Promise<{ service: Service; target: Target }> {
  if (!existsSync(portkeyEntry)) {
    throw new Error(
      `${portkeyEntry} is missing: run npm ci (it is a devDependency), or pass --no-portkey to leave the peer out`,
    );
  }
  const port = await freePort();
  const service = spawnService("portkey", {
    entry: portkeyEntry,
    env: process.env,
    nodeFlags,
    args: [`--port=${port}`, "--headless"],
  });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(service, `${origin}/`);
  } catch (error) {
    await service.stop(1000);
    throw error;
  }
  return {
    service,
    target: {
      name: "portkey",
      origin,
      path: "/v1/chat/completions",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${upstreamKey}`,
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": upstreamUrl,
      },
      model: "fake-model",
    },
  };
}
