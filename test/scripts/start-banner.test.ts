/**
 * The banner `npm start` prints (scripts/dev-prepare.sh, its prestart, through scripts/lib/start-banner.ts) names
 * the model config the gateway will load: GATEWAY_CONFIG from the environment or `.env`, a relative path counted
 * from where npm was invoked (INIT_CWD), as the gateway's readEnv counts it.
 *
 * dev-prepare.sh runs with stand-ins for `npm` (no build) and for `npx` when it makes `.env` (the checkout's file
 * is left alone); every other npx call is the real one.
 */
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import { startBanner } from "../../scripts/lib/start-banner.js";

const realNpx = execFileSync("bash", ["-c", "command -v npx"], { encoding: "utf8" }).trim();

function devPrepare(env: NodeJS.ProcessEnv): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "dev-prepare-"));
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(path.join(bin, "npm"), "#!/usr/bin/env bash\nexit 0\n");
  writeFileSync(
    path.join(bin, "npx"),
    `#!/usr/bin/env bash\n[[ "$*" == *env-file.ts* ]] && exit 0\nexec ${realNpx} "$@"\n`,
  );
  for (const name of ["npm", "npx"]) chmodSync(path.join(bin, name), 0o755);
  return new Promise((done, fail) =>
    execFile(
      "bash",
      [path.join(REPO_ROOT, "scripts/dev-prepare.sh"), "--no-build"],
      { env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => (error ? fail(new Error(`${error.message}\n${stderr}`)) : done(stdout)),
    ),
  );
}

const modelsLine = (banner: string) =>
  banner.split("\n").find((l) => l.trimStart().startsWith("models")) ?? "";

describe("npm start's banner", () => {
  it("names GATEWAY_CONFIG from the environment, not litellm/config.yaml", async () => {
    const banner = await devPrepare({ GATEWAY_ENV_FILE: "", GATEWAY_CONFIG: "/srv/platform/models.yaml" });
    expect(modelsLine(banner)).toContain("/srv/platform/models.yaml (GATEWAY_CONFIG)");
    expect(modelsLine(banner)).toContain("add-model.sh --config /srv/platform/models.yaml");
    expect(modelsLine(banner)).not.toContain("litellm/config.yaml");
  });

  it("names litellm/config.yaml when GATEWAY_CONFIG is not set", async () => {
    const banner = await devPrepare({ GATEWAY_ENV_FILE: "" });
    expect(modelsLine(banner)).toMatch(/models +litellm\/config\.yaml; register one with/);
  });
});

describe("startBanner", () => {
  const root = mkdtempSync(path.join(tmpdir(), "banner-root-"));

  it("takes GATEWAY_CONFIG from .env when the environment has none, relative to where npm was invoked", () => {
    const envFile = path.join(root, "operator.env");
    writeFileSync(envFile, "GATEWAY_CONFIG=conf/models.yaml\nPORT=4100\n");
    const banner = startBanner({ root, env: { GATEWAY_ENV_FILE: envFile, INIT_CWD: "/home/op/platform" } });
    expect(modelsLine(banner)).toContain("/home/op/platform/conf/models.yaml (GATEWAY_CONFIG)");
    expect(banner).toContain("http://localhost:4100/v1");
  });

  it("lets the environment win over .env, as the gateway does", () => {
    const envFile = path.join(root, "operator2.env");
    writeFileSync(envFile, "GATEWAY_CONFIG=/from/file.yaml\n");
    const banner = startBanner({
      root,
      env: { GATEWAY_ENV_FILE: envFile, GATEWAY_CONFIG: "/from/env.yaml" },
    });
    expect(modelsLine(banner)).toContain("/from/env.yaml (GATEWAY_CONFIG)");
  });

  it("names the database in use: DATABASE_URL's server, else the embedded one's folder", () => {
    const embedded = startBanner({ root, env: { GATEWAY_ENV_FILE: "" } });
    expect(embedded).toContain(
      `embedded PostgreSQL (PGlite), data in ${path.join(root, ".data", "postgres")}`,
    );
    const server = startBanner({
      root,
      env: { GATEWAY_ENV_FILE: "", DATABASE_URL: "postgres://u@db:5432/gw" },
    });
    expect(server).toContain("the Postgres server of DATABASE_URL");
  });

  it("says so instead of guessing when the gateway would refuse its environment", () => {
    const banner = startBanner({ root, env: { GATEWAY_ENV_FILE: "", PORT: "not-a-port" } });
    expect(modelsLine(banner)).toContain("the gateway will refuse its environment");
  });
});
