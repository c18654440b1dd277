/**
 * Redaction of secrets before a record reaches the audit log: a key's or user's `metadata` is free-form, and
 * operators put upstream passwords, API keys and tokens there. Every value under a field whose name looks like a
 * secret (at any depth: nested objects and objects inside arrays too) is replaced by {@link REDACTED}.
 *
 * A name looks like a secret when one of its words (split at `_`, `-`, `.`, spaces and camelCase humps,
 * compared case-insensitively) ends with password, passwd, passphrase, secret(s), token, credential(s),
 * apikey, accesskey, privatekey or secretkey; or is pwd, authorization or cookie; or when two adjacent words
 * make api key, access key, private key or secret key. So `password`, `DB_PASSWD`, `clientSecret`,
 * `access_token`, `x-api-key`, `API_Key`, `private_key`, `credentials` and `Authorization` are redacted;
 * `max_tokens` is not (its word is `tokens`).
 */

/** What a redacted value is stored as. */
export const REDACTED = "[redacted]";

const SECRET_ENDINGS = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "secrets",
  "token",
  "credential",
  "credentials",
  "apikey",
  "accesskey",
  "privatekey",
  "secretkey",
];
const SECRET_WORDS = new Set(["pwd", "authorization", "cookie"]);
const SECRET_PAIRS = new Set(["apikey", "accesskey", "privatekey", "secretkey"]);

/** The lower-case words of a field name (`clientSecret` → client, secret; `X-API-Key` → x, api, key). */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
}

/** Whether values under a field of this name are redacted (see the module comment for the rule). */
export function looksSecret(name: string): boolean {
  const parts = words(name);
  return parts.some(
    (word, i) =>
      SECRET_WORDS.has(word) ||
      SECRET_ENDINGS.some((ending) => word.endsWith(ending)) ||
      (i > 0 && SECRET_PAIRS.has(`${parts[i - 1]}${word}`)),
  );
}

/**
 * A copy of `value` (JSON-shaped: objects, arrays, scalars) where every value under a secret-looking field name,
 * at any depth, is {@link REDACTED}. The input is not changed.
 */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value)) {
    out[name] = looksSecret(name) ? REDACTED : redactSecrets(inner);
  }
  return out;
}
