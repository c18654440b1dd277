/**
 * What an operator adds before `pulumi up`, done the way the README tells one to: a model, and an MCP server
 * for the gateway's `/mcp` (docs/mcp.md). The stack declares neither, so the rehearsal runs them beside it: the
 * contract fake of an OpenAI-compatible upstream in a stand-in node image (./stand-ins/images.ts
 * MODEL_SERVER_IMAGE), on the stack's network as `model-server`, and an MCP server made with the official SDK
 * (MCP_SERVER_IMAGE) as `mcp-server`, declared under `mcp_servers:` in the operator's litellm/config.yaml as
 * docs/mcp.md shows (the gateway reaches it, its callers reach it only through `/mcp`).
 *
 * The gateway image bakes the model registry in (services/gateway/Dockerfile copies litellm/config.yaml; the
 * program builds from the checkout), so the model reaches the gateway container as an operator's would: in the
 * operator's checkout (a copy of this one, its files as they are on disk, git-ignored ones left out),
 * `scripts/add-model.sh --backend remote` registers the model in litellm/config.yaml, and the server's key goes
 * in the operator's .env (`.env.example` plus that key), which the program reads: every `*_API_KEY` of .env is
 * handed to the gateway (infra/config.ts providerKeys). No container is changed after it is created.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import { parse } from "dotenv";
import { isMap, isSeq, parseDocument } from "yaml";
import { REPO_ROOT } from "../../infra/files.js";
import {
  MCP_SERVER_IMAGE,
  MCP_SERVER_PORT,
  MODEL_SERVER_IMAGE,
  MODEL_SERVER_PORT,
} from "./stand-ins/images.js";

/** The model the operator registers, and where its server answers inside the stack's network. */
export const OPERATOR_MODEL = {
  /** `model_name` clients send (the fake upstream accepts any model). */
  name: "fake-model",
  container: "model-server",
  apiBase: `http://model-server:${MODEL_SERVER_PORT}/v1`,
  /** The .env variable holding the server's key (a `*_API_KEY`: the program hands it to the gateway). */
  keyVar: "UPSTREAM_API_KEY",
  key: "sk-rehearsal-upstream-key",
  /** Its price, USD per token (written into its entry by hand, as litellm/config.yaml's example shows). */
  inputCostPerToken: 0.000001,
  outputCostPerToken: 0.000002,
} as const;

/** The MCP server the operator declares, and where it answers inside the stack's network. */
export const OPERATOR_MCP_SERVER = {
  /** Its name under `mcp_servers:`: its tools are listed as `<name>-<tool>` (`stand-in-echo`). */
  name: "stand-in",
  container: "mcp-server",
  url: `http://mcp-server:${MCP_SERVER_PORT}/mcp`,
  /** USD per tools/call (`mcp_info.mcp_server_cost_info.default_cost_per_query`). */
  costPerQuery: 0.001,
} as const;

/** The operator's .env: the shipped `.env.example` with the model server's key added. */
export function operatorEnv(): Record<string, string> {
  return {
    ...parse(readFileSync(path.join(REPO_ROOT, ".env.example"), "utf8")),
    [OPERATOR_MODEL.keyVar]: OPERATOR_MODEL.key,
  };
}

/**
 * Makes the operator's checkout under `dir` (replaced if there): the files of this checkout git knows or does
 * not ignore, then the model registered by `scripts/add-model.sh` (run from this checkout, which has the
 * node_modules it needs, on the copy's litellm/config.yaml, with the operator's .env written to `dir`.env).
 * @returns `dir`.
 * @throws Error with git's or add-model.sh's output when either fails.
 */
export function operatorCheckout(dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  })
    .toString("utf8")
    .split("\0")
    .filter((f) => f !== "");
  for (const file of files) {
    try {
      cpSync(path.join(REPO_ROOT, file), path.join(dir, file), { preserveTimestamps: true });
    } catch (error) {
      // A file git still lists but the working tree deleted is not part of the operator's checkout.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  const envFile = `${dir}.env`;
  writeFileSync(
    envFile,
    Object.entries(operatorEnv())
      .map(([k, v]) => `${k}=${v}`)
      .join("\n"),
  );
  execFileSync(
    path.join(REPO_ROOT, "scripts/add-model.sh"),
    [
      "--backend",
      "remote",
      "--model",
      OPERATOR_MODEL.name,
      "--api-base",
      OPERATOR_MODEL.apiBase,
      "--api-key-env",
      OPERATOR_MODEL.keyVar,
      "--config",
      path.join(dir, "litellm/config.yaml"),
      "--env-file",
      envFile,
    ],
    { stdio: "inherit" },
  );
  priceModel(path.join(dir, "litellm/config.yaml"));
  declareMcpServer(path.join(dir, "litellm/config.yaml"));
  return dir;
}

/**
 * Sets the operator's model's price in `configFile` (comments kept), as an operator edits the entry.
 * @throws Error when the file has no entry for the model.
 */
function priceModel(configFile: string): void {
  const doc = parseDocument(readFileSync(configFile, "utf8"));
  const list = doc.get("model_list");
  const entry = isSeq(list)
    ? list.items.find((e) => isMap(e) && e.get("model_name") === OPERATOR_MODEL.name)
    : undefined;
  const params = isMap(entry) ? entry.get("litellm_params") : undefined;
  if (!isMap(params)) throw new Error(`${configFile} has no entry for ${OPERATOR_MODEL.name}`);
  params.set("input_cost_per_token", OPERATOR_MODEL.inputCostPerToken);
  params.set("output_cost_per_token", OPERATOR_MODEL.outputCostPerToken);
  writeFileSync(configFile, doc.toString());
}

/**
 * Declares the operator's MCP server under `mcp_servers:` in `configFile` (comments kept), as docs/mcp.md
 * shows: Streamable HTTP, no credential (it needs none), open to granted keys only, a cost per call.
 */
function declareMcpServer(configFile: string): void {
  const doc = parseDocument(readFileSync(configFile, "utf8"));
  doc.setIn(["mcp_servers", OPERATOR_MCP_SERVER.name], {
    url: OPERATOR_MCP_SERVER.url,
    transport: "http",
    description: "the rehearsal's stand-in MCP server",
    mcp_info: { mcp_server_cost_info: { default_cost_per_query: OPERATOR_MCP_SERVER.costPerQuery } },
  });
  writeFileSync(configFile, doc.toString());
}

/** `file` (under this checkout) as the same path under the operator's checkout `dir`. */
export function inCheckout(dir: string, file: string): string {
  return path.join(dir, path.relative(REPO_ROOT, file));
}

/** The servers the operator runs beside the stack: the model server and the MCP server. */
const OPERATOR_SERVERS = [
  {
    name: OPERATOR_MODEL.container,
    image: MODEL_SERVER_IMAGE,
    port: MODEL_SERVER_PORT,
    env: [`${OPERATOR_MODEL.keyVar}=${OPERATOR_MODEL.key}`],
  },
  { name: OPERATOR_MCP_SERVER.container, image: MCP_SERVER_IMAGE, port: MCP_SERVER_PORT, env: [] },
];

/** Removes the operator's server containers (before the stack's network is removed or created again). */
export async function removeOperatorServers(docker: Docker): Promise<void> {
  for (const server of OPERATOR_SERVERS) {
    await docker
      .getContainer(server.name)
      .remove({ force: true })
      .catch(() => {});
  }
}

/**
 * Creates and starts the operator's servers on `network` under their container names, each health-checked on
 * its `/health`.
 * @throws Error when the engine refuses a container.
 */
export async function startOperatorServers(docker: Docker, network: string): Promise<void> {
  await removeOperatorServers(docker);
  for (const server of OPERATOR_SERVERS) {
    const container = await docker.createContainer({
      name: server.name,
      Image: server.image,
      Env: server.env,
      Healthcheck: {
        Test: ["CMD", "wget", "-q", "-O", "/dev/null", `http://127.0.0.1:${server.port}/health`],
        Interval: 2e9,
        Timeout: 5e9,
        Retries: 30,
      },
      HostConfig: { NetworkMode: network, RestartPolicy: { Name: "unless-stopped" } },
    });
    await container.start();
  }
}
