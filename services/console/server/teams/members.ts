/**
 * Console users as team members: a member is named by e-mail in the console and added to the gateway's team by
 * the `user_id` the console provisioned them with (their chat user id), so their personal account and their
 * membership are one gateway user.
 */
import type { UserRecord } from "@platform/admin-api";
import { invalidRequest } from "../errors.js";
import { allUsers } from "../platform-spend.js";
import type { RouteContext } from "../routes/context.js";

/**
 * The gateway user of the console user with e-mail `email` (case-insensitive): someone who has signed in to
 * the console at least once (provisioning creates the gateway user).
 * @throws ConsoleError 400 naming `param` when no console user has that address.
 */
export async function consoleUserByEmail(
  ctx: RouteContext,
  email: string,
  param: string,
): Promise<UserRecord> {
  const wanted = email.trim().toLowerCase();
  const user = (await allUsers(ctx.gateway)).find((u) => u.user_email?.toLowerCase() === wanted);
  if (user === undefined) {
    throw invalidRequest(
      `No console user with the e-mail ${wanted}: they need to sign in to the key console once before they can join a team.`,
      param,
    );
  }
  return user;
}
