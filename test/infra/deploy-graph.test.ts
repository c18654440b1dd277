/**
 * The deploy graph against the checkout, under Pulumi's mocks: every image build names a context folder and a
 * Dockerfile that exist (the provider's Check would otherwise fail the preview), a missing Dockerfile is refused
 * by the program itself with its path, every uploaded file comes from a file of the repository (and every file
 * of an uploaded folder is shipped), and the one-shot bucket creation gates the trace viewer.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import { container, installMocks, type MockedRun, runPlatform, stackSettings } from "./harness.js";

let run: MockedRun;
let REPO_ROOT: string;

beforeAll(async () => {
  await installMocks("local");
  const { parseConfig } = await import("../../infra/config.js");
  REPO_ROOT = (await import("../../infra/files.js")).REPO_ROOT;
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  run = await runPlatform(parseConfig(await stackSettings("local"), env));
});

/**
 * Where each container's uploads come from. `dir` sources ship every file below them; `rendered` ones are
 * the source with values filled in (content differs). Uploads matching no entry are generated ones named in
 * GENERATED, or a failure.
 */
const SOURCES: { container: string; target: string; source: string; dir?: true; rendered?: true }[] = [
  {
    container: "gateway",
    target: "/app/litellm/guardrails/policy.yaml",
    source: "litellm/guardrails/policy.yaml",
  },
  { container: "chat", target: "/app/librechat.yaml", source: "chat-app.yaml" },
  {
    container: "metrics",
    target: "/etc/prometheus/prometheus.yml",
    source: "monitoring/prometheus.yml",
    rendered: true, // the gateway's METRICS_TOKEN on its scrape job
  },
  { container: "metrics", target: "/etc/prometheus/rules", source: "monitoring/rules", dir: true },
  {
    container: "alertmanager",
    target: "/etc/alertmanager/alertmanager.yml",
    source: "monitoring/alertmanager.yml",
    rendered: true,
  },
  {
    container: "dashboards",
    target: "/etc/grafana/provisioning",
    source: "monitoring/grafana/provisioning",
    dir: true,
  },
  {
    container: "dashboards",
    target: "/var/lib/grafana/dashboards",
    source: "monitoring/grafana/dashboards",
    dir: true,
  },
];
/** Uploads the program writes itself (no repository file behind them). */
const GENERATED = new Set(["relational-db:/docker-entrypoint-initdb.d/10-trace-db.sql"]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((rel) => statSync(path.join(dir, rel)).isFile())
    .map((rel) => rel.split(path.sep).join("/"));
}

describe("deploy graph: image builds", () => {
  it("builds every image from a context folder and a Dockerfile inside it that exist", () => {
    const builds = run.registered.filter((r) => r.type === "docker:index/image:Image");
    expect(builds.length).toBe(3);
    for (const b of builds) {
      const build = b.inputs.build as { context: string; dockerfile: string };
      // Pulumi runs from the project root; the program's paths are relative to it, like the test's cwd.
      const context = path.resolve(process.cwd(), build.context);
      const dockerfile = path.resolve(process.cwd(), build.dockerfile);
      expect(statSync(context).isDirectory(), `${b.name} context ${context}`).toBe(true);
      expect(existsSync(dockerfile) && statSync(dockerfile).isFile(), `${b.name} ${dockerfile}`).toBe(true);
      expect(path.relative(context, dockerfile).startsWith(".."), `${b.name} Dockerfile in context`).toBe(
        false,
      );
    }
  });

  it("refuses a Dockerfile missing from the build context, naming it and where it looked", async () => {
    const { localImage } = await import("../../infra/build.js");
    const empty = mkdtempSync(path.join(tmpdir(), "no-dockerfile-"));
    try {
      const parent = new pulumi.ComponentResource("test:build:Parent", "missing-dockerfile");
      expect(() => localImage(parent, "console", "services/console/Dockerfile", undefined, empty)).toThrow(
        `services/console/Dockerfile is missing (looked in ${empty})`,
      );
      expect(() =>
        localImage(parent, "scanner", "scanner/Dockerfile", undefined, path.join(empty, "gone")),
      ).toThrow(`build context ${path.join(empty, "gone")} is missing`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe("deploy graph: uploads", () => {
  it("ships only files of the repository (or named generated files), with their content", () => {
    let checked = 0;
    for (const c of run.containers.values()) {
      for (const upload of c.uploads) {
        if (GENERATED.has(`${c.name}:${upload.file}`)) continue;
        const entry = SOURCES.find(
          (s) =>
            s.container === c.name &&
            (s.dir ? upload.file.startsWith(`${s.target}/`) : upload.file === s.target),
        );
        expect(entry, `${c.name} uploads ${upload.file} from no known source`).toBeDefined();
        if (!entry) continue;
        const source = entry.dir
          ? path.join(REPO_ROOT, entry.source, upload.file.slice(entry.target.length + 1))
          : path.join(REPO_ROOT, entry.source);
        expect(existsSync(source), `${c.name} ${upload.file}: ${source}`).toBe(true);
        if (!entry.rendered)
          expect(upload.content, `${c.name} ${upload.file}`).toBe(readFileSync(source, "utf8"));
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(SOURCES.length);
  });

  it("ships every file of every source, none skipped", () => {
    for (const s of SOURCES) {
      const shipped = new Set(container(run, s.container).uploads.map((u) => u.file));
      const files = s.dir ? filesUnder(path.join(REPO_ROOT, s.source)) : [""];
      expect(files.length, s.source).toBeGreaterThan(0);
      for (const rel of files) {
        const target = rel === "" ? s.target : `${s.target}/${rel}`;
        expect(shipped.has(target), `${s.source}/${rel} → ${s.container}:${target}`).toBe(true);
      }
    }
  });
});

describe("deploy graph: the one-shot bucket creation", () => {
  it("runs attached to completion, never restarted, not required to keep running", async () => {
    const reg = run.registered.find(
      (r) => r.type === "docker:index/container:Container" && r.inputs.name === "object-store-init",
    );
    expect(reg?.inputs).toMatchObject({ attach: true, mustRun: false, restart: "no" });
  });

  it("hands the bucket to the trace viewer only through its exit code (0 here)", () => {
    for (const name of ["trace-web", "trace-worker"])
      expect(container(run, name).env.LANGFUSE_S3_EVENT_UPLOAD_BUCKET, name).toBe("langfuse");
  });
});
