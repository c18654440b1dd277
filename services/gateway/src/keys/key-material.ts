/**
 * Virtual key material: generation, hashing and the display name. Only the SHA-256 hex of a key is ever
 * stored or logged (LiteLLM stores the same hash in `LiteLLM_VerificationToken.token`).
 */
import { createHash, randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Random characters after `sk-`: 40 base62 characters, about 238 bits. */
const KEY_RANDOM_CHARS = 40;

/** A new key: `sk-` + 40 base62 characters from `crypto.randomBytes` (rejection sampling, no modulo bias). */
export function generateKey(): string {
  let out = "sk-";
  while (out.length < 3 + KEY_RANDOM_CHARS) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 × 62: bytes at or above it are dropped so every character is equally likely.
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === 3 + KEY_RANDOM_CHARS) break;
    }
  }
  return out;
}

/** SHA-256 hex of a presented key (the `token` column). */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** True for a 64-character lowercase hex string, the form of a stored key hash. */
export const isKeyHash = (value: string): boolean => /^[0-9a-f]{64}$/.test(value);

/**
 * A key or its hash, as admin endpoints accept either (LiteLLM does the same): the hash itself, or the SHA-256
 * of a full key.
 */
export const toKeyHash = (keyOrHash: string): string =>
  isKeyHash(keyOrHash) ? keyOrHash : hashKey(keyOrHash);

/** The display form `sk-…abcd`: first three characters, an ellipsis, the last four. */
export function keyDisplayName(key: string): string {
  return `${key.slice(0, 3)}…${key.slice(-4)}`;
}

/** `sk-` and 17 to 253 printable ASCII characters without spaces: every key the gateway accepts has it. */
const KEY_FORMAT = /^sk-[\x21-\x7e]{17,253}$/;

/**
 * Cheap shape check before hashing or any lookup: keys made here (and CHAT_SERVICE_KEY) start with `sk-`, are
 * 20 to 256 characters long and hold only printable ASCII; anything else is refused without a query.
 */
export const looksLikeVirtualKey = (presented: string): boolean => KEY_FORMAT.test(presented);
