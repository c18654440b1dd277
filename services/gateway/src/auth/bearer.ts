/** `Authorization: Bearer <token>` parsing and constant-time comparison with a configured secret. */
import { createHash, timingSafeEqual } from "node:crypto";

/** SHA-256 digest of a secret or a presented token (32 bytes), compared instead of the strings. */
export const digestOf = (value: string): Buffer => createHash("sha256").update(value).digest();

/** The token of an `Authorization: Bearer <token>` header value, or undefined. */
export function bearerFrom(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/**
 * Whether `header` is `Bearer <secret>` for the secret whose {@link digestOf} is `expected` (constant time);
 * false when `expected` is undefined (no secret configured).
 */
export function presentsSecret(header: string | undefined, expected: Buffer | undefined): boolean {
  const token = bearerFrom(header);
  return expected !== undefined && token !== undefined && timingSafeEqual(digestOf(token), expected);
}
