/**
 * Chat usage attribution: the chat (LibreChat) calls the gateway with its service key (CHAT_SERVICE_KEY) and
 * names the signed-in chat user in two headers its custom endpoint fills in (`headers:` in chat-app.yaml,
 * LibreChat's `{{LIBRECHAT_USER_ID}}` and `{{LIBRECHAT_USER_EMAIL}}` placeholders, packages/api/src/utils/env.ts
 * in LibreChat):
 *
 * - `x-librechat-user-id`: required; the gateway `user_id` the call is booked on (provisioned with the DEFAULT_*
 *   limits when new). The console provisions chat users under the same id (LibreChat's user id).
 * - `x-librechat-user-email`: optional; stored as `user_email` when the user is provisioned here.
 *
 * Only a key whose metadata has `user_headers: true` may name a user (metadata only the master key can set);
 * the headers of any other key are ignored. The call then runs as the named user: its budget, rpm and tpm are
 * enforced (plus the service key's own limits, if it has any), its spend rows, metric `user` label and trace
 * carry that user.
 */
import type { UserAttributor, VirtualKeyAuth } from "../auth/types.js";
import { invalidRequest } from "../errors/gateway-error.js";
import type { Clock } from "../time/clock.js";
import type { UserDirectory } from "./directory.js";
import { limitSubject } from "./records.js";

/** Header naming the chat user (LibreChat's `{{LIBRECHAT_USER_ID}}`). */
export const USER_ID_HEADER = "x-librechat-user-id";
/** Header with the chat user's email (LibreChat's `{{LIBRECHAT_USER_EMAIL}}`). */
export const USER_EMAIL_HEADER = "x-librechat-user-email";
/** Longest accepted user id, characters (the admin API's `user_id` limit). */
export const MAX_USER_ID_CHARS = 256;
/** Longest accepted email, characters (the admin API's `user_email` limit). */
export const MAX_EMAIL_CHARS = 320;

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** True when `text` holds a C0 control character (NUL, tab, line breaks…) or DEL. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
/** A `{{…}}` placeholder the chat did not fill in (e.g. a field the chat user does not have). */
const PLACEHOLDER = /\{\{[^}]*\}\}/;

/**
 * One header's value, checked: a single value, at most `maxChars`, no control characters.
 * @returns the value, or undefined when absent or empty.
 * @throws GatewayError 400 `invalid_request_error` whose `param` is the header name.
 */
function headerValue(headers: Headers, name: string, maxChars: number): string | undefined {
  const raw = headers[name];
  if (raw === undefined || raw === "") return undefined;
  if (typeof raw !== "string")
    throw invalidRequest(`Send the ${name} header once, not ${raw.length} times.`, name);
  if (raw.length > maxChars) {
    throw invalidRequest(`The ${name} header is longer than ${maxChars} characters.`, name);
  }
  if (hasControlCharacter(raw)) {
    throw invalidRequest(`The ${name} header holds control characters (NUL, line breaks, tabs…).`, name);
  }
  return raw;
}

/**
 * The chat user a request names.
 * @throws GatewayError 400 naming the header: `x-librechat-user-id` missing, repeated, too long, with control
 *   characters or an unfilled `{{…}}` placeholder; `x-librechat-user-email` repeated, too long or with control
 *   characters (an unfilled placeholder there counts as no email).
 */
export function namedUser(headers: Headers): { userId: string; email: string | null } {
  const userId = headerValue(headers, USER_ID_HEADER, MAX_USER_ID_CHARS);
  if (userId === undefined) {
    throw invalidRequest(
      `This key books each call on the chat user it names: send the ${USER_ID_HEADER} header (chat-app.yaml sends "{{LIBRECHAT_USER_ID}}").`,
      USER_ID_HEADER,
    );
  }
  if (PLACEHOLDER.test(userId)) {
    throw invalidRequest(
      `The ${USER_ID_HEADER} header holds a placeholder the chat did not fill in; check the custom endpoint's headers in chat-app.yaml.`,
      USER_ID_HEADER,
    );
  }
  const email = headerValue(headers, USER_EMAIL_HEADER, MAX_EMAIL_CHARS);
  return { userId, email: email === undefined || PLACEHOLDER.test(email) ? null : email };
}

/**
 * The {@link UserAttributor} over a {@link UserDirectory}: the named user is looked up (or provisioned) and
 * becomes the call's user; the subjects are the key's own (scope key) followed by the user's, rolled over to
 * the clock's now. The user's email names it in refusal messages.
 */
export function userAttributor(directory: UserDirectory, clock: Clock): UserAttributor {
  return {
    async attribute(auth: VirtualKeyAuth, headers: Headers): Promise<VirtualKeyAuth> {
      const named = namedUser(headers);
      const user = await directory.resolve(named.userId, named.email);
      // A team key's calls stay bound by its team (not the named user's personal budget, as for any team key).
      const own = auth.subjects.filter((subject) => subject.scope === "key" || subject.scope === "team");
      const teamKey = auth.teamId != null;
      return {
        ...auth,
        userId: user.userId,
        subjects: teamKey
          ? own
          : [...own, limitSubject("user", user.userId, user, clock.now(), user.userEmail)],
      };
    },
  };
}
