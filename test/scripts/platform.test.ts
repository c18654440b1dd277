/**
 * scripts/platform.sh with stand-ins for `docker` and `pulumi` on PATH that record their arguments (one call
 * per line) and answer like a stack of three containers with two data volumes.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";

const DOCKER = `#!/usr/bin/env bash
printf '%s\\n' "docker $*" >>"$STANDIN_LOG"
case "$1" in
  ps) if [[ "$*" == *table* ]]; then printf 'NAMES\\tSTATUS\\tPORTS\\ngateway\\tUp 2 minutes (healthy)\\t127.0.0.1:4000->4000/tcp\\n'
      else printf 'gateway\\nrelational-db\\ndocument-db\\n'; fi ;;
  volume) [[ "$2" == ls ]] && printf 'platform-relational-db-data\\nother-volume\\nplatform-document-db-data\\n' ;;
  exec) case "$*" in
      *pg_dumpall*) printf -- '-- PostgreSQL database cluster dump\nDROP DATABASE IF EXISTS gateway;\n' ;;
      *mongodump*) printf 'mongo-archive' ;;
      *psql*|*mongorestore*) cat >"$STANDIN_LOG.stdin-$3" ;;
    esac ;;
esac
exit 0
`;
const PULUMI = `#!/usr/bin/env bash
printf '%s\\n' "pulumi $* (backend $PULUMI_BACKEND_URL)" >>"$STANDIN_LOG"
`;

function setUp() {
  const dir = mkdtempSync(path.join(tmpdir(), "platform-sh-"));
  const bin = path.join(dir, "bin");
  const root = path.join(dir, "root");
  mkdirSync(bin);
  mkdirSync(path.join(root, ".pulumi"), { recursive: true });
  writeFileSync(path.join(root, ".pulumi/passphrase"), "secret\n");
  for (const [name, text] of [
    ["docker", DOCKER],
    ["pulumi", PULUMI],
  ] as const) {
    writeFileSync(path.join(bin, name), text);
    chmodSync(path.join(bin, name), 0o755);
  }
  const log = path.join(dir, "calls.log");
  const run = (args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string; calls: string[] }>((done) => {
      writeFileSync(log, "");
      execFile(
        "bash",
        [path.join(REPO_ROOT, "scripts/platform.sh"), ...args],
        { env: { PATH: `${bin}:/usr/bin:/bin`, STANDIN_LOG: log, PLATFORM_ROOT: root }, timeout: 30_000 },
        (error, stdout, stderr) =>
          done({
            status: error ? Number(error.code ?? 1) : 0,
            stdout,
            stderr,
            calls: readFileSync(log, "utf8").split("\n").filter(Boolean),
          }),
      );
    });
  return { dir, root, log, run };
}

describe("scripts/platform.sh", () => {
  it("ps lists the stack's containers with health; logs and restart take only a service of the stack", async () => {
    const { run } = setUp();
    const ps = await run(["ps"]);
    expect(ps.stdout).toContain("gateway\tUp 2 minutes (healthy)");
    expect(ps.calls).toEqual([
      "docker ps -a --filter network=platform --format table {{.Names}}\\t{{.Status}}\\t{{.Ports}}",
    ]);
    expect((await run(["logs", "gateway", "-f"])).calls).toContain("docker logs --tail 200 -f gateway");
    expect((await run(["restart", "relational-db"])).calls).toContain("docker restart relational-db");
    const unknown = await run(["logs", "nope"]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain(
      "no service nope on network platform; services: document-db gateway relational-db",
    );
  });

  it("destroy asks unless --yes, keeps volumes unless --volumes, and then drops only the stack's", async () => {
    const { root, run } = setUp();
    const refused = await run(["destroy"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("run it on a terminal or pass --yes");
    expect(refused.calls).toEqual([]);

    const kept = await run(["destroy", "--yes"]);
    expect(kept.calls).toEqual([`pulumi destroy --yes --stack local (backend file://${root}/.pulumi/state)`]);
    expect(kept.stdout).toContain("data volumes kept");

    const dropped = await run(["destroy", "--volumes", "--yes", "--stack", "vm"]);
    expect(dropped.calls).toContain(`pulumi destroy --yes --stack vm (backend file://${root}/.pulumi/state)`);
    expect(dropped.calls).toContain("docker volume rm platform-relational-db-data platform-document-db-data");
  });

  it("backs up both databases with their own credentials and restores them", async () => {
    const { dir, log, run } = setUp();
    const backup = path.join(dir, "b1");
    const made = await run(["backup", backup]);
    expect(made.status).toBe(0);
    expect(readFileSync(path.join(backup, "relational-db.sql"), "utf8")).toContain(
      "PostgreSQL database cluster dump",
    );
    expect(readFileSync(path.join(backup, "document-db.archive.gz"), "utf8")).toBe("mongo-archive");
    expect(made.calls).toContain(
      'docker exec relational-db sh -c pg_dumpall --clean --if-exists -U "$POSTGRES_USER"',
    );
    expect(made.calls.join("\n")).toContain(
      '-p "$MONGO_INITDB_ROOT_PASSWORD" --authenticationDatabase admin',
    );

    const restored = await run(["restore", backup]);
    expect(restored.status).toBe(0);
    expect(readFileSync(`${log}.stdin-document-db`, "utf8")).toBe("mongo-archive");
    expect(readFileSync(`${log}.stdin-relational-db`, "utf8")).toContain("PostgreSQL database cluster dump");
    // The gateway stays connected: a plain DROP DATABASE would fail and the restore land on the live tables.
    expect(readFileSync(`${log}.stdin-relational-db`, "utf8")).toContain(
      "DROP DATABASE IF EXISTS gateway WITH (FORCE);",
    );
    expect(restored.calls.some((c) => c.startsWith("docker exec -i relational-db sh -c psql"))).toBe(true);
    const missing = await run(["restore", path.join(dir, "none")]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("has no relational-db.sql and document-db.archive.gz");
  });

  it("lists its commands with --help", async () => {
    const { run } = setUp();
    const help = await run(["--help"]);
    for (const c of [
      "ps",
      "logs <service>",
      "restart <service>",
      "stop",
      "start",
      "destroy [--volumes]",
      "backup",
      "restore",
    ])
      expect(help.stdout).toContain(c);
  });
});
