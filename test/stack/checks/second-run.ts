/**
 * A second run of the rehearsal on the same volumes: a key is made and used, every declared container is
 * removed and created again from the declarations (networks afresh, volumes kept, as `pulumi up` replacing the
 * containers would), and the key must still answer once the stack is healthy again: the data survives
 * re-creation.
 */
import { waitHealthy } from "../create.js";
import { chatStatus, makeKey, type StackAccess } from "./access.js";

/** Completion status with the key before and after the re-creation. */
export interface SecondRunOutcome {
  before: number;
  after: number;
}

/**
 * Makes the key, runs `recreate`, waits for every health-checked container (up to `timeoutMs` each) and calls
 * the model with the key again.
 * @throws Error when the key cannot be made, or (naming the container, with its last health-check outputs and
 * log) when a container is not healthy again in time.
 */
export async function secondRunKeepsKeys(
  access: StackAccess,
  recreate: () => Promise<void>,
  timeoutMs = 6 * 60_000,
): Promise<SecondRunOutcome> {
  const { stack, docker } = access;
  const key = await makeKey(stack, `second-run-${Date.now()}`);
  const before = await chatStatus(stack, key);
  await recreate();
  await Promise.all(
    stack.containers.filter((c) => c.healthcheck).map((c) => waitHealthy(docker, c.name, timeoutMs)),
  );
  return { before, after: await chatStatus(stack, key) };
}
