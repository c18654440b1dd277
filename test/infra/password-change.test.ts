/**
 * Postgres and MongoDB apply their password to an empty data volume only. The volume records a digest of the
 * password it was initialised with (a label the program never updates), and a different password later is
 * refused before the database container is touched. Here the mocked engine reports relational-db's volume as
 * initialised with another password (what a changed `.env` or a re-`up` after `pulumi destroy` looks like) and
 * document-db's as initialised with the current one.
 */
import { describe, expect, it } from "vitest";
import {
  collectProgramErrors,
  declareLocalStack,
  ignoreChanges,
  installMocks,
  registrations,
} from "./harness.js";

const errors = collectProgramErrors();

describe("a database password that differs from the one its volume was initialised with", () => {
  it("is refused with how to proceed, and the database container is not created", async () => {
    const { CREDENTIAL_LABEL, credentialDigest } = await import("../../infra/volume-credential.js");
    const recorded: Record<string, string> = {
      "relational-db-data": credentialDigest("platform-relational-db-data", "the-first-password"),
      "document-db-data": credentialDigest("platform-document-db-data", "rnd-document-db-password"),
    };
    await installMocks("local", (type, name) =>
      type === "docker:index/volume:Volume" && recorded[name]
        ? { labels: [{ label: CREDENTIAL_LABEL, value: recorded[name] }] }
        : undefined,
    );
    await declareLocalStack({ RELATIONAL_DB_PASSWORD: "a-new-password" });

    const registered = (type: string, name: string) =>
      registrations().find((r) => r.type === `docker:index/${type}` && r.name === name);
    await expect.poll(() => errors().length, { timeout: 10_000 }).toBeGreaterThan(0);
    await expect
      .poll(() => registered("container:Container", "document-db"), { timeout: 10_000 })
      .toBeDefined();
    const messages = errors().join("\n");
    expect(messages).toContain(
      "relational-db: RELATIONAL_DB_PASSWORD is not the password volume platform-relational-db-data was initialised with",
    );
    expect(messages).toContain("set RELATIONAL_DB_PASSWORD in .env back to the previous value");
    expect(messages).toContain("docker volume rm platform-relational-db-data");
    expect(messages).not.toContain("a-new-password");
    expect(messages).not.toContain("document-db");
    expect(registered("container:Container", "relational-db")).toBeUndefined();

    // What the volumes carry: a digest (never the password), kept as first written.
    const volume = registered("volume:Volume", "relational-db-data");
    const labels = volume?.inputs.labels as { label: string; value: string }[];
    expect(labels).toEqual([
      { label: CREDENTIAL_LABEL, value: credentialDigest("platform-relational-db-data", "a-new-password") },
    ]);
    expect(JSON.stringify(volume?.inputs)).not.toContain("a-new-password");
    expect(ignoreChanges("relational-db-data")).toEqual(["labels"]);
    expect(ignoreChanges("document-db-data")).toEqual(["labels"]);
    expect(registered("container:Container", "document-db")?.inputs.envs).toContain(
      "MONGO_INITDB_ROOT_PASSWORD=rnd-document-db-password",
    );
  });
});
