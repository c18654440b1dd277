/**
 * Databases that apply their password to an empty data volume only (Postgres' POSTGRES_PASSWORD, MongoDB's
 * MONGO_INITDB_ROOT_PASSWORD): the volume records a digest of the password it was initialised with, and a
 * different password later is refused before the database container is replaced with a password the data
 * does not know.
 *
 * The record is a Docker label on the volume, written when Docker creates it and never updated (Docker's volume
 * labels are immutable and the program declares `ignoreChanges: ["labels"]`). So it survives `pulumi destroy`
 * with the retained volume: a later `up` adopts the volume, the provider reads its real labels back, and the
 * comparison sees the password the data was made with. Volumes created before this check carry no record and
 * are not checked. docs/operations.md, "Database passwords", says how to proceed.
 */
import { createHash } from "node:crypto";
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";

/** Label of a data volume holding {@link credentialDigest} of the password it was initialised with. */
export const CREDENTIAL_LABEL = "platform.credential-sha256";

/**
 * SHA-256 (hex) of the volume's name and the password: not the password, and different per volume. (Whoever
 * can read Docker's labels can also read the container's environment, so this hides nothing from them; it keeps
 * the password itself out of `docker volume inspect`.)
 */
export function credentialDigest(volumeName: string, password: string): string {
  return createHash("sha256").update(`${volumeName}\n${password}`).digest("hex");
}

/** What a service says about the password its data volume is initialised with. */
export interface VolumeCredential {
  /** Key of the volume in the service's `volumes`, e.g. `data`. */
  volume: string;
  /** Environment variable of the container that carries the password, e.g. `POSTGRES_PASSWORD`. */
  env: string;
  /** The `.env` variable that pins the password, named in the refusal, e.g. `RELATIONAL_DB_PASSWORD`. */
  setting: string;
}

/** The label input recording `password` on the volume named `volumeName`. */
export function credentialLabels(
  volumeName: string,
  password: pulumi.Input<string>,
): pulumi.Output<{ label: string; value: string }[]> {
  return pulumi
    .output(password)
    .apply((pw) => [{ label: CREDENTIAL_LABEL, value: credentialDigest(volumeName, pw) }]);
}

/**
 * `password`, once the volume's recorded digest (its labels as the provider reads them back) matches it or the
 * volume has no record. Feed this to the container instead of the password: on a mismatch the output rejects,
 * the container is not created or replaced, and `pulumi preview`/`up` fails with the message.
 * @param service container name, for the message.
 * @throws Error (in the output) naming the service, the setting and the volume, and how to proceed; never the
 *   password.
 */
export function checkedPassword(
  service: string,
  volume: docker.Volume,
  volumeName: string,
  password: pulumi.Input<string>,
  credential: VolumeCredential,
): pulumi.Output<string> {
  return pulumi.all([volume.labels, password]).apply(([labels, pw]) => {
    const recorded = labels?.find((l) => l.label === CREDENTIAL_LABEL)?.value;
    if (recorded !== undefined && recorded !== credentialDigest(volumeName, pw)) {
      throw new Error(
        `${service}: ${credential.setting} is not the password volume ${volumeName} was initialised with, and ` +
          `the database applies ${credential.env} to an empty volume only (it would refuse the new one). ` +
          `Either set ${credential.setting} in .env back to the previous value, or delete the volume and start ` +
          `empty: \`docker volume rm ${volumeName}\` after \`pulumi destroy\` (ALL ITS DATA IS LOST). ` +
          "See docs/operations.md, Database passwords.",
      );
    }
    return pw;
  });
}
