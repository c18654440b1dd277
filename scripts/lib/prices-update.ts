/**
 * `npm run prices:update [-- <version>]`: moves the gateway's pinned price catalogue (`@pydantic/genai-prices`,
 * services/gateway/package.json, exact version) to `<version>` (default: the newest on the npm registry), then
 * prints, for every model of the configured model lists, the list prices that changed (USD per million tokens).
 *
 * The model lists read: `GATEWAY_CONFIG` when set (else litellm/config.yaml) and litellm/config.example.yaml; the
 * models are each entry's `litellm_params.model` and `model_info.base_model`. Prices are read by the gateway's own
 * lookup (`cost/list-prices.ts`), before and after the install, each in a fresh process (`--snapshot`), so the
 * figures are those the gateway will book. Exits non-zero when npm fails (nothing is changed then).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { catalogPrice } from "../../services/gateway/src/cost/list-prices.js";
import { isProviderName } from "../../services/gateway/src/providers/index.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const PACKAGE = "@pydantic/genai-prices";

/** model (`provider/name`) → price part → USD per million tokens; null when the catalogue has no price. */
type Snapshot = Record<string, Record<string, number> | null>;

/** `provider/name` of every model the config files name (entries with an env reference are skipped). */
function configuredModels(files: string[]): string[] {
  const models = new Set<string>();
  for (const path of files) {
    if (!existsSync(path)) continue;
    const doc = parse(readFileSync(path, "utf8")) as { model_list?: unknown } | null;
    const list = Array.isArray(doc?.model_list) ? doc.model_list : [];
    for (const entry of list as {
      litellm_params?: { model?: unknown };
      model_info?: { base_model?: unknown };
    }[]) {
      const model = entry?.litellm_params?.model;
      if (typeof model !== "string" || model.startsWith("os.environ/")) continue;
      models.add(model);
      const base = entry?.model_info?.base_model;
      if (typeof base === "string") models.add(base.includes("/") ? base : `${model.split("/")[0]}/${base}`);
    }
  }
  return [...models].sort();
}

/** The gateway's list price of each model, per million tokens. */
function snapshot(models: string[]): Snapshot {
  const out: Snapshot = {};
  for (const model of models) {
    const slash = model.indexOf("/");
    const provider = model.slice(0, slash);
    const listed = isProviderName(provider) ? catalogPrice(provider, model.slice(slash + 1)) : undefined;
    out[model] =
      listed === undefined
        ? null
        : Object.fromEntries(
            Object.entries(listed.price).map(([part, usd]) => [part, +(usd * 1e6).toFixed(6)]),
          );
  }
  return out;
}

/** The installed catalogue's version (npm places it under the gateway's workspace or hoists it to the root). */
function installedVersion(): string {
  const paths = ["services/gateway/node_modules", "node_modules"].map((dir) =>
    join(root, dir, PACKAGE, "package.json"),
  );
  const path = paths.find((p) => existsSync(p));
  if (path === undefined) throw new Error(`${PACKAGE} is not installed; run npm ci first`);
  return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
}

/** The snapshot taken by a fresh process (the installed catalogue, not the one this process loaded). */
function freshSnapshot(models: string[]): Snapshot {
  const self = fileURLToPath(import.meta.url);
  const json = execFileSync(process.execPath, ["--import", "tsx", self, "--snapshot", ...models], {
    cwd: root,
    encoding: "utf8",
  });
  return JSON.parse(json) as Snapshot;
}

/** One line per changed model: what each changed part was and is. */
function describeChanges(before: Snapshot, after: Snapshot): string[] {
  const lines: string[] = [];
  for (const model of Object.keys(after)) {
    const was = before[model] ?? null;
    const now = after[model] ?? null;
    if (was === null && now === null) continue;
    if (was === null) lines.push(`${model}: now priced (${JSON.stringify(now)})`);
    else if (now === null)
      lines.push(`${model}: no longer priced (was ${JSON.stringify(was)}); set its price in the config`);
    else {
      const parts = [...new Set([...Object.keys(was), ...Object.keys(now)])]
        .filter((part) => was[part] !== now[part])
        .map((part) => `${part} ${was[part] ?? "–"} → ${now[part] ?? "–"}`);
      if (parts.length > 0) lines.push(`${model}: ${parts.join(", ")}`);
    }
  }
  return lines;
}

function main(): void {
  if (process.argv[2] === "--snapshot") {
    process.stdout.write(JSON.stringify(snapshot(process.argv.slice(3))));
    return;
  }
  const version = process.argv[2] ?? "latest";
  const config = process.env.GATEWAY_CONFIG
    ? resolve(process.env.GATEWAY_CONFIG)
    : join(root, "litellm/config.yaml");
  const models = configuredModels([config, join(root, "litellm/config.example.yaml")]);
  const before = freshSnapshot(models);
  const from = installedVersion();
  execFileSync("npm", ["install", "-w", "@platform/gateway", "--save-exact", `${PACKAGE}@${version}`], {
    cwd: root,
    stdio: "inherit",
  });
  const to = installedVersion();
  const lines = describeChanges(before, freshSnapshot(models));
  console.log(`${PACKAGE} ${from} → ${to}; ${models.length} configured models (USD per million tokens):`);
  console.log(lines.length === 0 ? "  no list price changed" : lines.map((l) => `  ${l}`).join("\n"));
  if (from !== to)
    console.log("Commit services/gateway/package.json and package-lock.json, then restart the gateway.");
}

main();
